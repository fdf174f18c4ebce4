// The HTTP contract, checked on every operation the served OpenAPI document lists, so a new
// route is held to it without anyone remembering to add it here.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uuidv7 } from "../../src/ids";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";

interface Operation {
  method: string;
  path: string;
  op: any;
}

let server: TestServer;
let org: TestOrg;
let doc: any;
let operations: Operation[];
/** Statuses each operation was seen to answer with, checked against the document at the end. */
const observed = new Map<string, Set<number>>();

beforeAll(async () => {
  server = await startTestServer({ background: false });
  org = server.createOrg({ balancePence: 100_000 });
  doc = (await server.api("/v1/openapi.json")).body;
  operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
});
afterAll(() => server.stop());

const isPublic = (o: Operation) => Array.isArray(o.op.security) && o.op.security.length === 0;
const authenticated = () => operations.filter((o) => !isPublic(o));
const jsonOperations = () => authenticated().filter((o) => o.op.requestBody?.content?.["application/json"]);
const withPathId = (path: string, id: string) => path.replace(/\{\w+\}/g, id);
const resolve = (schema: any): any => (schema?.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema);

async function send(o: Operation, init: { path?: string; headers?: Record<string, string>; body?: BodyInit }) {
  const response = await fetch(`${server.url}${init.path ?? withPathId(o.path, uuidv7())}`, { method: o.method, headers: init.headers, body: init.body });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: the assertions below say so
  }
  const key = `${o.method} ${o.path}`;
  if (!observed.has(key)) observed.set(key, new Set());
  observed.get(key)!.add(response.status);
  return { status: response.status, body, headers: response.headers };
}

/** A body the operation accepts: each required field's first example. */
function validBody(o: Operation): Record<string, unknown> {
  const schema = resolve(o.op.requestBody.content["application/json"].schema);
  const body: Record<string, unknown> = {};
  for (const name of schema.required ?? []) {
    const property = schema.properties[name];
    expect(property.examples, `${o.method} ${o.path}: ${name} needs an example`).toBeDefined();
    body[name] = property.examples[0];
  }
  return body;
}

function ledgerOf(orgId: string) {
  return server.deps.db
    .query<{ n: number; sum: number }, [string]>("SELECT count(*) AS n, coalesce(sum(amount_pence), 0) AS sum FROM ledger_entries WHERE org_id = ?")
    .get(orgId)!;
}

function storedKeys(orgId: string): number {
  return server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM idempotency_keys WHERE org_id = ?").get(orgId)!.n;
}

describe("authentication comes first", () => {
  test("without a valid key every /v1 operation is 401, whatever its body, parameters or size", async () => {
    expect(authenticated().length).toBeGreaterThanOrEqual(13);
    const credentials: Record<string, string>[] = [{}, { authorization: `Bearer rk_live_${"a".repeat(40)}` }, { authorization: "Basic abc" }];
    for (const o of authenticated()) {
      for (const headers of credentials) {
        const badPath = `${withPathId(o.path, "%zz")}${o.op.parameters?.some((p: any) => p.in === "query") ? "?limit=1e2&offset=x" : ""}`;
        for (const body of o.method === "POST" ? ["{}", "{not json"] : [undefined]) {
          for (const contentType of ["application/json", "text/plain", "application/x-www-form-urlencoded"]) {
            const res = await send(o, { path: badPath, headers: { ...headers, "content-type": contentType, "idempotency-key": "x".repeat(300) }, body });
            expect(res.status, `${o.method} ${badPath} ${contentType} ${body}`).toBe(401);
            expect(res.body.error).toBe("unauthorized");
            expect(res.headers.get("www-authenticate")).toStartWith("Bearer");
          }
        }
      }
      if (o.method === "POST") {
        // Over the 1 MiB JSON limit and anonymous: the missing key is what the client hears about.
        const res = await send(o, { headers: { "content-type": "application/json" }, body: JSON.stringify({ pad: "x".repeat(1_100_000) }) });
        expect(res.status).toBe(401);
      }
    }
  });

  test("unknown /v1 routes and methods are 401 without a key and 404 with one, in the Error body", async () => {
    for (const [method, path] of [["GET", "/v1/no-such-thing"], ["PUT", "/v1/search"], ["PATCH", "/v1/credits"], ["OPTIONS", "/v1/executions"]] as const) {
      const anonymous = await fetch(`${server.url}${path}`, { method });
      expect(anonymous.status).toBe(401);
      expect((await anonymous.json()).error).toBe("unauthorized");
      const known = await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${org.key}` } });
      expect(known.status).toBe(404);
      expect(await known.json()).toEqual({ error: "not_found", details: "no such route" });
    }
  });

  test("the scheme is case-insensitive and may be followed by several spaces (RFC 7235)", async () => {
    for (const authorization of [`bearer ${org.key}`, `BEARER ${org.key}`, `BeArEr ${org.key}`, `Bearer   ${org.key}`]) {
      const res = await server.api("/v1/credits", { headers: { authorization } });
      expect(res.status, authorization.slice(0, 8)).toBe(200);
    }
    expect((await server.api("/v1/credits", { headers: { authorization: `Bearer${org.key}` } })).status).toBe(401);
  });

  test("public operations need no key: the document, its page and the Stripe webhook", async () => {
    expect((await server.api("/v1/openapi.json")).status).toBe(200);
    expect((await server.api("/v1/docs")).status).toBe(200);
    const webhook = operations.find((o) => o.path === "/v1/webhooks/stripe")!;
    expect(isPublic(webhook)).toBe(true);
    const res = await send(webhook, { headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).not.toBe(401);
  });
});

describe("media types", () => {
  test("a JSON operation refuses any other body with 415 before idempotency, validation or charging", async () => {
    expect(jsonOperations().map((o) => o.path)).toEqual(["/v1/search", "/v1/screenings", "/v1/executions", "/v1/top-ups"]);
    const before = ledgerOf(org.orgId);
    const storedBefore = storedKeys(org.orgId);
    for (const o of jsonOperations()) {
      const fields = Object.fromEntries(Object.entries(validBody(o)).map(([k, v]) => [k, String(v)]));
      const form = new FormData();
      for (const [k, v] of Object.entries(fields)) form.append(k, v);
      const bodies: [string, { headers: Record<string, string>; body: BodyInit }][] = [
        ["urlencoded", { headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(fields).toString() }],
        ["multipart", { headers: {}, body: form }],
        ["text/plain", { headers: { "content-type": "text/plain" }, body: JSON.stringify(validBody(o)) }],
        ["none", { headers: {}, body: new TextEncoder().encode(JSON.stringify(validBody(o))) }],
        ["json-looking", { headers: { "content-type": "application/jsonx" }, body: JSON.stringify(validBody(o)) }],
      ];
      for (const [name, { headers, body }] of bodies) {
        const res = await send(o, { headers: { authorization: `Bearer ${org.key}`, "idempotency-key": `media-${o.path}`, ...headers }, body });
        expect(res.status, `${o.path} ${name}`).toBe(415);
        expect(res.body.error).toBe("unsupported_media_type");
        expect(res.body.details).toStartWith(`POST ${o.path} takes Content-Type: application/json`);
      }
    }
    expect(ledgerOf(org.orgId)).toEqual(before);
    expect(storedKeys(org.orgId)).toBe(storedBefore);

    // The key of a refused request is free: the first real request under it runs.
    const search = jsonOperations().find((o) => o.path === "/v1/search")!;
    const res = await send(search, {
      headers: { authorization: `Bearer ${org.key}`, "content-type": "Application/JSON; charset=UTF-8", "idempotency-key": "media-/v1/search" },
      body: JSON.stringify({ query: "breach notification" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("idempotent-replayed")).toBeNull();
    expect(ledgerOf(org.orgId).sum).toBe(before.sum - 2);
  });

  test("a JSON body over 1 MiB is 413 on every JSON operation", async () => {
    for (const o of jsonOperations()) {
      const res = await send(o, {
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
        body: JSON.stringify({ ...validBody(o), pad: "x".repeat(1_100_000) }),
      });
      expect(res.status).toBe(413);
      expect(res.body.error).toBe("payload_too_large");
    }
  });
});

describe("ids in paths", () => {
  test("a malformed id is 404 not_found on every operation that takes one", async () => {
    const withIds = authenticated().filter((o) => o.path.includes("{"));
    expect(withIds.length).toBeGreaterThanOrEqual(4);
    for (const o of withIds) {
      for (const id of ["%zz", "not-a-uuid", `urn:uuid:${uuidv7()}`, `${uuidv7()}0`, uuidv7()]) {
        const res = await send(o, { path: withPathId(o.path, id), headers: { authorization: `Bearer ${org.key}` } });
        expect(res.status, `${o.method} ${o.path} ${id}`).toBe(404);
        expect(res.body.error).toBe("not_found");
      }
    }
  });
});

describe("integers are integers", () => {
  test("every integer body field refuses strings, fractions and booleans, naming the field and the rule", async () => {
    const before = ledgerOf(org.orgId);
    let checked = 0;
    for (const o of jsonOperations()) {
      const schema = resolve(o.op.requestBody.content["application/json"].schema);
      for (const [name, property] of Object.entries(schema.properties as Record<string, any>)) {
        if (property.type !== "integer") continue;
        checked++;
        for (const bad of [String(property.minimum), property.minimum + 0.5, `${property.minimum}e0`, true, null]) {
          const res = await send(o, {
            headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
            body: JSON.stringify({ ...validBody(o), [name]: bad }),
          });
          expect(res.status, `${o.path} ${name}=${JSON.stringify(bad)}`).toBe(400);
          expect(res.body).toEqual({ error: "validation_failed", details: `body.${name}: must be an integer from ${property.minimum} to ${property.maximum}` });
        }
      }
    }
    expect(checked).toBe(4); // topK twice, timeoutSeconds, amountPence
    expect(ledgerOf(org.orgId)).toEqual(before);
  });

  test("every integer query parameter takes plain decimal digits only", async () => {
    let checked = 0;
    for (const o of authenticated()) {
      for (const parameter of (o.op.parameters ?? []).filter((p: any) => p.in === "query")) {
        expect(parameter.schema.type).toBe("integer");
        checked++;
        for (const bad of ["1e2", "0x10", "5.0", "+5", " 5", "5 ", "abc", "", "99999999999999999999"]) {
          const res = await send(o, { path: `${o.path}?${parameter.name}=${encodeURIComponent(bad)}`, headers: { authorization: `Bearer ${org.key}` } });
          expect(res.status, `${o.path}?${parameter.name}=${bad}`).toBe(400);
          expect(res.body).toEqual({
            error: "validation_failed",
            details: `query.${parameter.name}: must be an integer from ${parameter.schema.minimum} to ${parameter.schema.maximum}`,
          });
        }
        const fine = await send(o, { path: `${o.path}?${parameter.name}=${parameter.schema.minimum + 1}`, headers: { authorization: `Bearer ${org.key}` } });
        expect(fine.status).toBe(200);
      }
    }
    expect(checked).toBe(2); // limit and offset
  });
});

describe("lengths are counted in characters", () => {
  const emoji = (n: number) => "😀".repeat(n);
  const post = (path: string, body: unknown) => server.api(path, { key: org.key, body });

  test("a 1000-emoji query is a valid search; 1001 is not", async () => {
    expect((await post("/v1/search", { query: emoji(1000), topK: 1 })).status).toBe(200);
    const over = await post("/v1/search", { query: emoji(1001) });
    expect(over.status).toBe(400);
    expect(over.body.details).toBe("body.query: must be 1 to 1000 characters (found 1001)");
  });

  test("screening keywords and execution code count characters too", async () => {
    expect((await post("/v1/screenings", { keywords: [emoji(1000)] })).status).toBe(202);
    const keyword = await post("/v1/screenings", { keywords: ["fine", emoji(1001)] });
    expect(keyword.body.details).toBe("body.keywords.1: must be 1 to 1000 characters (found 1001)");
    expect((await post("/v1/executions", { code: `# ${emoji(65_534)}`, timeoutSeconds: 1 })).status).toBe(202);
    const code = await post("/v1/executions", { code: `# ${emoji(65_535)}` });
    expect(code.body.details).toBe("body.code: must be 0 to 65536 characters (found 65537)");
  });
});

describe("the document says what the server does", () => {
  test("every status seen above is documented for its operation, with the headers it sends", () => {
    expect(observed.size).toBeGreaterThanOrEqual(13);
    for (const [key, statuses] of observed) {
      const [method, path] = key.split(" ") as [string, string];
      const responses = doc.paths[path][method.toLowerCase()].responses;
      for (const status of statuses) {
        expect(Object.keys(responses), `${key} answered ${status}`).toContain(String(status));
        expect(responses[String(status)].headers["X-Request-Id"]).toBeDefined();
      }
    }
    for (const o of authenticated()) {
      expect(o.op.responses["401"].headers["WWW-Authenticate"]).toBeDefined();
      expect(o.op.responses["429"].headers["Retry-After"]).toBeDefined();
      expect(o.op.responses["431"]).toBeDefined();
      expect(Object.keys(o.op.responses["503"].content["application/json"].examples)).toContain("storage_full");
      expect(o.op.responses["503"].headers["Retry-After"]).toBeDefined();
      if (o.method === "POST") {
        const success = Object.keys(o.op.responses).find((s) => s.startsWith("2"))!;
        expect(o.op.responses[success].headers["Idempotent-Replayed"]).toBeDefined();
        expect(o.op.responses["409"].headers["Retry-After"]).toBeDefined();
        expect(Object.keys(o.op.responses)).toEqual(expect.arrayContaining(["413", "415"]));
      }
    }
  });
});
