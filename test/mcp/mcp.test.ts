// The MCP endpoint's finer rules, on an in-process server: argument checks in the API's words,
// idempotency under concurrency, screenings, the HTTP-level refusals, the ledger as the
// dashboard shows it. The end-to-end run against the compiled binary is binary.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { importPassages, loadSampleCorpus } from "../../src/search/corpus/import";
import { signedInUser } from "../dashboard/client";
import { startTestServer, TEST_JURISDICTIONS, type TestOrg, type TestServer } from "../helpers/server";

let server: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startTestServer();
  const slugs = new Set(TEST_JURISDICTIONS.map((j) => j.slug));
  const { passages } = await loadSampleCorpus();
  await importPassages(server.deps, { jurisdictions: [], passages: passages.filter((p) => p.jurisdictions.every((s) => slugs.has(s))) });
}, 120_000);
afterAll(async () => {
  for (const client of clients) await client.close();
  await server.stop();
});

async function connect(org: TestOrg, url = server.url): Promise<Client> {
  const client = new Client({ name: "regkb-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${org.key}` } } }));
  clients.push(client);
  return client;
}

const call = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;
const errorOf = (result: CallToolResult) => {
  expect(result.isError).toBe(true);
  return JSON.parse((result.content[0] as { text: string }).text) as { error: string; details?: string };
};
const settles = (org: TestOrg) =>
  server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM ledger_entries WHERE org_id = ? AND type = 'settle'").get(org.orgId)!.n;

function post(org: TestOrg, body: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body,
  });
}

describe("arguments", () => {
  test("are checked with the API's rules and words, unknown ones named; nothing is charged", async () => {
    const org = server.createOrg({ balancePence: 100 });
    const client = await connect(org);
    const cases: [Record<string, unknown>, string][] = [
      [{ query: "breach", topK: 51 }, "arguments.topK: must be an integer from 1 to 50"],
      [{ query: "breach", topK: "3" }, "arguments.topK: must be an integer from 1 to 50"],
      [{ query: "   " }, "arguments.query: must not be blank"],
      [{ query: "x".repeat(1001) }, "arguments.query: must be 1 to 1000 characters (found 1001)"],
      [{}, "arguments.query: is required"],
      [{ query: "breach", jurisdiction: "eu" }, "arguments.jurisdiction: is not an argument of this tool (it takes query, jurisdictions, topK, idempotencyKey)"],
      [{ query: "breach", jurisdictions: [] }, "arguments.jurisdictions: must have 1 to 200 items (found 0)"],
      [{ query: "breach", idempotencyKey: "é" }, "arguments.idempotencyKey: must be 1 to 255 printable ASCII characters"],
    ];
    for (const [args, details] of cases) {
      expect(errorOf(await call(client, "search_regulations", args)), JSON.stringify(args).slice(0, 60)).toEqual({ error: "validation_failed", details });
    }
    expect(settles(org)).toBe(0);
    expect(errorOf(await call(client, "get_balance", { verbose: true })).details).toBe("arguments.verbose: is not an argument of this tool (it takes none)");
    expect(errorOf(await call(client, "get_provision", { citation: "breach notification" })).details).toStartWith(
      'arguments.citation: "breach notification" cites no article or section',
    );
    expect(errorOf(await call(client, "get_provision", { citation: "GDPR Article 999" })).error).toBe("not_found");
  });

  test("an unknown tool is a protocol error", async () => {
    const client = await connect(server.createOrg());
    await expect(client.callTool({ name: "delete_everything", arguments: {} })).rejects.toThrow(/Unknown tool: delete_everything/);
  });
});

describe("idempotencyKey", () => {
  test("ten calls at once with one key: one charge, ten equal results", async () => {
    const org = server.createOrg({ balancePence: 100 });
    const client = await connect(org);
    const results = await Promise.all(
      Array.from({ length: 10 }, () => call(client, "search_regulations", { query: "records of processing activities", topK: 3, idempotencyKey: "ten-at-once" })),
    );
    expect(new Set(results.map((r) => JSON.stringify(r.structuredContent))).size).toBe(1);
    expect(results.filter((r) => r._meta?.["regkb/idempotentReplayed"] === true).length).toBe(9);
    expect(settles(org)).toBe(1);
    // The key is the organisation's, as on /v1: the API under the same key is another request.
    const api = await server.api("/v1/search", { key: org.key, body: { query: "records of processing activities", topK: 3 }, headers: { "idempotency-key": "ten-at-once" } });
    expect(api.body.error).toBe("idempotency_key_reused");
  });

  test("a refused call stores nothing: retried after a top-up, it runs and is charged once", async () => {
    const org = server.createOrg({ balancePence: 1 });
    const client = await connect(org);
    const args = { query: "breach notification", idempotencyKey: "after-top-up" };
    expect(errorOf(await call(client, "search_regulations", args)).error).toBe("insufficient_credit");
    recordOperatorTopUp(server.deps, { orgId: org.orgId, amountPence: 10, reference: "mcp-test" });
    const ok = await call(client, "search_regulations", args);
    expect(ok.isError).toBeUndefined();
    expect(ok._meta).toBeUndefined();
    expect((await call(client, "search_regulations", args))._meta).toEqual({ "regkb/idempotentReplayed": true });
    expect(settles(org)).toBe(1);
  });
});

describe("screenings", () => {
  test("screen_keywords holds, get_screening reads the results; the ledger says MCP; a retried start is one screening", async () => {
    const org = server.createOrg({ balancePence: 100 });
    const client = await connect(org);
    const args = { keywords: ["breach notification", "data protection officer"], topK: 2, idempotencyKey: "screen-once" };
    const started = await call(client, "screen_keywords", args);
    const { id, status, estimatedCostPence } = started.structuredContent as any;
    expect({ status, estimatedCostPence }).toEqual({ status: "pending", estimatedCostPence: 4 });
    expect((await call(client, "screen_keywords", args)).structuredContent).toEqual(started.structuredContent);
    let screening: any;
    for (const deadline = Date.now() + 30_000; ; await Bun.sleep(25)) {
      screening = (await call(client, "get_screening", { id })).structuredContent;
      if (screening.status === "completed" || screening.status === "failed" || Date.now() > deadline) break;
    }
    expect(screening.status).toBe("completed");
    expect(screening.results.map((r: any) => r.keyword)).toEqual(args.keywords);
    expect(screening.results[0].matches[0].citationPath).toBeString();
    const entries = (await server.api("/v1/credits/ledger", { key: org.key })).body.entries.map((e: any) => [e.type, e.amountPence, e.description]);
    expect(entries.slice(0, 3)).toEqual([
      ["settle", -4, `screening ${id} (MCP) completed: 2 keywords × 2p`],
      ["release", 4, `screening ${id} (MCP) completed: 2 keywords × 2p`],
      ["reserve", -4, `screening ${id} (MCP): hold for 2 keywords × 2p`],
    ]);
    expect(errorOf(await call(client, "get_screening", { id: "not-a-screening" })).error).toBe("not_found");
    const stranger = await connect(server.createOrg());
    expect(errorOf(await call(stranger, "get_screening", { id })).error).toBe("not_found");
  });
});

describe("HTTP", () => {
  test("a body that is not one JSON-RPC message is refused in the Error body; a notification is 202", async () => {
    const org = server.createOrg();
    const batch = await post(org, JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "tools/list" }]));
    expect(batch.status).toBe(400);
    expect(await batch.json()).toEqual({ error: "validation_failed", details: "body: send one JSON-RPC message per request (batches are not accepted)" });
    const id = await post(org, JSON.stringify({ jsonrpc: "2.0", id: { nested: 1 }, method: "tools/list" }));
    expect(await id.json()).toEqual({ error: "validation_failed", details: "body.id: must be of type string or integer" });
    const form = await post(org, "jsonrpc=2.0", { "content-type": "application/x-www-form-urlencoded" });
    expect(form.status).toBe(415);
    const big = await post(org, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(1_100_000) } }));
    expect(big.status).toBe(413);
    const header = await post(org, JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), { "idempotency-key": "k" });
    expect((await header.json()).details).toStartWith("header.idempotency-key: /mcp takes no Idempotency-Key header");
    const notification = await post(org, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe("");
    const removed = await fetch(`${server.url}/mcp`, { method: "DELETE", headers: { authorization: `Bearer ${org.key}` } });
    expect(removed.status).toBe(405);
  });

  test("a browser page of another site is refused with 403, whatever Host it makes the request carry", async () => {
    const org = server.createOrg();
    const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const rebound = await post(org, list, { origin: "http://attacker.example:8080", host: "attacker.example:8080" });
    expect(rebound.status).toBe(403);
    expect((await rebound.json()).error.message).toContain("Origin");
    expect((await post(org, list, { origin: new URL(server.deps.config.publicUrl).origin })).status).toBe(200);
    expect((await post(org, list)).status).toBe(200);
  });

  test("each POST takes one token of the key's rate limit", async () => {
    const limited = await startTestServer({ background: false, env: { REGKB_RATE_LIMIT_PER_MINUTE: "3" } });
    try {
      const org = limited.createOrg();
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get_balance", arguments: {} } });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${limited.url}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body,
        });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await limited.stop();
    }
  });
});

describe("the dashboard", () => {
  test("the ledger page shows an MCP search beside an API one", async () => {
    const org = server.createOrg({ balancePence: 100 });
    await call(await connect(org), "search_regulations", { query: "breach notification" });
    await server.api("/v1/search", { key: org.key, body: { query: "breach notification" } });
    const { client } = await signedInUser(server, org.orgId, "mcp-ledger@example.com");
    const page = await client.text("/ledger");
    expect(page.status).toBe(200);
    expect(page.text).toContain("Search (MCP)");
    expect(page.text.match(/<td>Search \(MCP\)<\/td>/g)!.length).toBe(1);
    expect(page.text.match(/<td>Search<\/td>/g)!.length).toBe(1);
  });
});
