import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { revokeApiKey } from "../../src/auth/service";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";

let server: TestServer;
let acme: TestOrg;
let globex: TestOrg;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  acme = server.createOrg({ name: "Acme", jurisdictions: ["eu", "us-ny"] });
  globex = server.createOrg({ name: "Globex", jurisdictions: ["us-ca"] });
});
afterAll(() => server.stop());

describe("bearer authentication", () => {
  const cases: [string, Record<string, string>][] = [
    ["missing header", {}],
    ["wrong scheme", { authorization: "Basic abc" }],
    ["malformed key", { authorization: "Bearer rk_live_short" }],
    ["unknown well-formed key", { authorization: `Bearer rk_live_${"a".repeat(40)}` }],
    ["test-mode prefix", { authorization: `Bearer rk_test_${"a".repeat(40)}` }],
  ];
  for (const [name, headers] of cases) {
    test(`${name} → 401 unauthorized with WWW-Authenticate`, async () => {
      const res = await server.api("/v1/jurisdictions", { headers });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("unauthorized");
      expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
    });
  }

  test("a revoked key stops working at once", async () => {
    const org = server.createOrg();
    expect((await server.api("/v1/jurisdictions", { key: org.key })).status).toBe(200);
    const keyRow = server.deps.db.query<{ id: string }, [string]>("SELECT id FROM api_keys WHERE org_id = ?").get(org.orgId)!;
    revokeApiKey(server.deps, keyRow.id);
    const res = await server.api("/v1/jurisdictions", { key: org.key });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "unauthorized", details: "unknown or revoked API key" });
  });

  test("only a hash of the key is stored, and last use is recorded", async () => {
    await server.api("/v1/jurisdictions", { key: acme.key });
    const rows = server.deps.db.query<Record<string, unknown>, []>("SELECT * FROM api_keys").all();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(acme.key);
    expect(dump).not.toContain(acme.key.slice(8));
    const row = rows.find((r) => r.org_id === acme.orgId)!;
    expect(row.key_hash).toBe(new Bun.CryptoHasher("sha256").update(acme.key).digest("hex"));
    expect(typeof row.last_used_at_ms).toBe("number");
  });
});

describe("organisation scoping", () => {
  test("each organisation sees only its own enabled jurisdictions", async () => {
    const a = await server.api("/v1/jurisdictions", { key: acme.key });
    const g = await server.api("/v1/jurisdictions", { key: globex.key });
    expect(a.body.jurisdictions.map((j: { slug: string }) => j.slug)).toEqual(["eu", "us-ny"]);
    expect(g.body.jurisdictions.map((j: { slug: string }) => j.slug)).toEqual(["us-ca"]);
    expect(g.body.jurisdictions[0]).toEqual({ slug: "us-ca", name: "California", description: "California law" });
  });
});

describe("error shapes", () => {
  test("unknown route → 404 not_found in the Error body", async () => {
    const res = await server.api("/v1/no-such-thing", { key: acme.key });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("not_found");
    expect(typeof res.body.details).toBe("string");
  });

  test("every response carries a request id, echoed when the client sends one", async () => {
    const generated = await server.api("/healthz");
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await server.api("/healthz", { headers: { "x-request-id": "client-abc.123" } });
    expect(echoed.headers.get("x-request-id")).toBe("client-abc.123");
    const hostile = await server.api("/healthz", { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(hostile.headers.get("x-request-id")).not.toContain(" ");
  });
});

describe("rate limiting", () => {
  test("per-key limit answers 429 rate_limited with Retry-After", async () => {
    const limited = await startTestServer({ background: false, env: { REGKB_RATE_LIMIT_PER_MINUTE: "3" } });
    try {
      const org = limited.createOrg();
      const other = limited.createOrg();
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await limited.api("/v1/jurisdictions", { key: org.key })).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
      const res = await limited.api("/v1/jurisdictions", { key: org.key });
      expect(res.body.error).toBe("rate_limited");
      expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect((await limited.api("/v1/jurisdictions", { key: other.key })).status).toBe(200);
    } finally {
      await limited.stop();
    }
  });
});

describe("validation", () => {
  test("schema failures → 400 validation_failed whose details name the field", async () => {
    const cases: [string, { method?: string; body?: unknown }, string][] = [
      ["/v1/credits/ledger?limit=500", {}, "query.limit"],
      ["/v1/credits/ledger?limit=abc", {}, "query.limit"],
      ["/v1/credits/ledger?offset=-1", {}, "query.offset"],
      ["/v1/top-ups", { body: { amountPence: 5 } }, "body.amountPence"],
      ["/v1/top-ups", { body: {} }, "body.amountPence"],
    ];
    for (const [path, options, field] of cases) {
      const res = await server.api(path, { key: acme.key, ...options });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("validation_failed");
      expect(res.body.details).toStartWith(`${field}:`);
    }
  });

  test("malformed JSON → 400 validation_failed", async () => {
    const res = await server.api("/v1/top-ups", { key: acme.key, body: "{not json" });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation_failed");
  });
});

describe("body limits", () => {
  test("a JSON body over 1 MiB → 413 payload_too_large in the Error body, before it is read", async () => {
    const res = await server.api("/v1/top-ups", { key: acme.key, body: JSON.stringify({ amountPence: 1000, pad: "x".repeat(1_100_000) }) });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe("payload_too_large");
  });
});
