// The MCP endpoint as an assistant reaches it: the compiled binary, set up with its own command
// line, on a real port, spoken to by the official SDK's own client over Streamable HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { textPdf } from "../fixtures/pdf/writer";
import { requireBinary, runBinary } from "../helpers/binary";
import { tempDir } from "../helpers/server";

let workDir: string;
let dataDir: string;
let child: ReturnType<typeof Bun.spawn>;
let url: string;
/** Org A: eu, us, us-ny, £1 of credit. Org B: the same, with a policy PDF of its own. Broke: eu only, no credit. */
const keys = { a: "", b: "", broke: "" };
const ids = { a: "", b: "", broke: "" };
const clients: Client[] = [];
const POLICY = "Zephyr Holdings escalates every personal data breach to the Quokka committee within four hours.";

function cli(...args: string[]) {
  const run = runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: workDir });
  if (run.exitCode !== 0) throw new Error(`regkb ${args.join(" ")}: ${run.stderr}`);
  return run.json;
}

function organisation(name: string, jurisdictions: string, pence: number): { id: string; key: string } {
  const org = cli("org", "create", "--name", name, "--jurisdictions", jurisdictions);
  if (pence > 0) cli("credits", "top-up", "--org", org.id, "--amount-pence", String(pence));
  return { id: org.id, key: cli("key", "create", "--org", org.id).key };
}

async function api(key: string, path: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } });
  return { status: res.status, headers: res.headers, body: (await res.json()) as any };
}

async function connect(key: string): Promise<Client> {
  const client = new Client({ name: "regkb-test-assistant", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  clients.push(client);
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

const text = (result: CallToolResult) => (result.content[0] as { type: "text"; text: string }).text;
const ledger = async (key: string) => (await api(key, "/v1/credits/ledger")).body.entries as { type: string; amountPence: number; description: string }[];

beforeAll(async () => {
  requireBinary();
  workDir = tempDir("regkb-mcp-");
  dataDir = join(workDir, "data");
  expect(cli("corpus", "import", "--sample").chunksAdded).toBeGreaterThan(700);
  const a = organisation("Assistant Bank", "eu,us,us-ny", 100);
  const b = organisation("Other Bank", "eu,us,us-ny", 100);
  const broke = organisation("Broke Bank", "eu", 0);
  Object.assign(keys, { a: a.key, b: b.key, broke: broke.key });
  Object.assign(ids, { a: a.id, b: b.id, broke: broke.id });

  child = Bun.spawn([requireBinary(), "serve", "--port", "0", "--data-dir", dataDir], {
    cwd: workDir,
    env: { PATH: "/usr/bin:/bin", HOME: "/tmp", REGKB_LOG_LEVEL: "error", REGKB_SANDBOX_POOL_SIZE: "0" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let seen = "";
  while (!/listening on (http:\/\/\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${seen}`);
    seen += new TextDecoder().decode(value);
  }
  url = /listening on (http:\/\/\S+)/.exec(seen)![1]!;
  reader.releaseLock();

  // Org B's own policy, ready in its searches.
  const form = new FormData();
  form.append("file", new File([textPdf({ pages: [["Breach escalation", POLICY]] }) as Uint8Array<ArrayBuffer>], "zephyr-breach-policy.pdf", { type: "application/pdf" }));
  const uploaded = await api(keys.b, "/v1/documents", { method: "POST", body: form });
  expect(uploaded.status).toBe(202);
  for (const deadline = Date.now() + 30_000; ; await Bun.sleep(50)) {
    const status = (await api(keys.b, `/v1/documents/${uploaded.body.id}`)).body.document.status;
    if (status === "ready") break;
    if (status === "failed" || Date.now() > deadline) throw new Error(`the policy document is ${status}`);
  }
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close();
  child?.kill("SIGTERM");
  await child?.exited;
  rmSync(workDir, { recursive: true, force: true });
});

describe("MCP against the compiled binary", () => {
  test("tools/list: every tool, each argument described for a model, with an output schema", async () => {
    const { tools } = await (await connect(keys.a)).listTools();
    expect(tools.map((t) => t.name)).toEqual([
      "search_regulations",
      "get_provision",
      "screen_keywords",
      "get_screening",
      "list_jurisdictions",
      "get_balance",
      "list_documents",
    ]);
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(80);
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      for (const [name, property] of Object.entries<any>(tool.inputSchema.properties ?? {})) expect(property.description, `${tool.name}.${name}`).toBeString();
    }
    const search = tools.find((t) => t.name === "search_regulations")!;
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(search.inputSchema.properties!.topK).toMatchObject({ type: "integer", minimum: 1, maximum: 50, default: 10 });
    expect(search.description).toContain("2 pence");
  });

  test("search_regulations: cited matches, charged 2p in the ledger as an MCP search", async () => {
    const client = await connect(keys.a);
    const result = await call(client, "search_regulations", { query: "How quickly must a personal data breach be notified to the supervisory authority?", topK: 3 });
    expect(result.isError).toBeUndefined();
    const found = result.structuredContent as any;
    expect(found.creditsChargedPence).toBe(2);
    expect(found.availablePence).toBe(98);
    expect(found.results).toHaveLength(3);
    const top = found.results[0];
    expect(top.citationPath).toStartWith("GDPR > Article 33");
    expect(top).toMatchObject({ source: "Regulation (EU) 2016/679 (General Data Protection Regulation)", jurisdictionSlugs: ["eu"] });
    expect(top.score).toBeNumber();
    expect(top.content).toContain("72 hours");
    for (const match of found.results) expect(text(result)).toContain(match.citationPath);
    const [entry] = await ledger(keys.a);
    expect(entry).toMatchObject({ type: "settle", amountPence: -2, description: "Search (MCP)" });
  });

  test("get_provision: a GDPR article, a CFR section and a state section, whole and free", async () => {
    const client = await connect(keys.a);
    const before = (await api(keys.a, "/v1/credits")).body.availablePence;
    const gdpr = (await call(client, "get_provision", { citation: "GDPR Article 33" })).structuredContent as any;
    expect(gdpr.citation).toBe("GDPR Article 33");
    // A title may follow the article ("GDPR > Article 33 (Notification of …) > 1–2").
    expect(gdpr.passages.map((p: any) => p.citationPath)).toEqual([
      expect.stringMatching(/^GDPR > Article 33( \(.+\))? > 1–2$/),
      expect.stringMatching(/^GDPR > Article 33( \(.+\))? > 3–5$/),
    ]);
    expect(gdpr.passages[0]).toMatchObject({ source: "Regulation (EU) 2016/679 (General Data Protection Regulation)", jurisdictionSlugs: ["eu"] });
    const cfr = await call(client, "get_provision", { citation: "12 CFR 1003.4" });
    const cfrPaths = (cfr.structuredContent as any).passages.map((p: any) => p.citationPath);
    expect(cfrPaths.length).toBeGreaterThan(3);
    for (const path of cfrPaths) {
      expect(path).toStartWith("12 CFR 1003.4");
      expect(text(cfr)).toContain(path);
    }
    const ny = (await call(client, "get_provision", { citation: "N.Y. Gen. Bus. Law § 899-aa" })).structuredContent as any;
    expect(ny).toMatchObject({ citation: "N.Y. Gen. Bus. Law § 899-aa", jurisdictionSlugs: ["us-ny"] });
    expect(ny.passages.length).toBe(7);
    expect((await api(keys.a, "/v1/credits")).body.availablePence).toBe(before);
    // A jurisdiction the organisation does not have is not found, like an unknown provision.
    const outside = await call(await connect(keys.broke), "get_provision", { citation: "N.Y. Gen. Bus. Law § 899-aa" });
    expect(outside.isError).toBe(true);
    expect(JSON.parse(text(outside)).error).toBe("not_found");
  });

  test("at zero credit a search is the tool error insufficient_credit, and nothing is charged", async () => {
    const result = await call(await connect(keys.broke), "search_regulations", { query: "breach notification" });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result))).toEqual({ error: "insufficient_credit", details: "available 0 pence, required 2 pence" });
    expect(await ledger(keys.broke)).toEqual([]);
  });

  test("a jurisdiction not enabled is the tool error invalid_jurisdictions, not charged", async () => {
    const before = (await ledger(keys.a)).length;
    const result = await call(await connect(keys.a), "search_regulations", { query: "breach", jurisdictions: ["eu", "us-ca"] });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result))).toEqual({ error: "invalid_jurisdictions", details: "unknown or not enabled for this organisation: us-ca" });
    expect((await ledger(keys.a)).length).toBe(before);
  });

  test("another organisation's document is never returned", async () => {
    const query = "Zephyr Holdings Quokka committee personal data breach escalation";
    const own = (await call(await connect(keys.b), "search_regulations", { query, topK: 50 })).structuredContent as any;
    expect(own.results[0]).toMatchObject({ source: "zephyr-breach-policy.pdf", jurisdictionSlugs: [] });
    const other = (await call(await connect(keys.a), "search_regulations", { query, topK: 50 })).structuredContent as any;
    expect(other.results.length).toBe(50);
    expect(other.results.filter((m: any) => m.source === "zephyr-breach-policy.pdf" || m.content.includes("Quokka"))).toEqual([]);
    const documents = (await call(await connect(keys.a), "list_documents", {})).structuredContent as any;
    expect(documents).toEqual({ documents: [] });
  });

  test("a tools/call retried with its idempotencyKey is answered again and charged once", async () => {
    const client = await connect(keys.a);
    const args = { query: "data protection officer", topK: 2, idempotencyKey: "assistant-retry-1" };
    const first = await call(client, "search_regulations", args);
    const retry = await call(await connect(keys.a), "search_regulations", args);
    expect(retry.structuredContent).toEqual(first.structuredContent);
    expect(retry._meta).toEqual({ "regkb/idempotentReplayed": true });
    // One charge for the two calls, under the first call's operation id; with the searches above, three in all.
    const charges = (await ledger(keys.a)).filter((e) => e.description === "Search (MCP)");
    expect(charges.length).toBe(3);
    expect(cli("credits", "show", "--org", ids.a).availablePence).toBe(100 - 3 * 2);
    const reused = await call(client, "search_regulations", { ...args, query: "something else" });
    expect(JSON.parse(text(reused)).error).toBe("idempotency_key_reused");
    expect((await ledger(keys.a)).filter((e) => e.description === "Search (MCP)").length).toBe(3);
  });

  test("resources: the jurisdictions and each one's provisions index", async () => {
    const client = await connect(keys.a);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([
      "regkb://jurisdictions",
      "regkb://jurisdictions/eu/provisions",
      "regkb://jurisdictions/us/provisions",
      "regkb://jurisdictions/us-ny/provisions",
    ]);
    const jurisdictions = JSON.parse(((await client.readResource({ uri: "regkb://jurisdictions" })).contents[0] as { text: string }).text);
    expect(jurisdictions.jurisdictions.map((j: any) => j.slug)).toEqual(["eu", "us", "us-ny"]);
    const ny = JSON.parse(((await client.readResource({ uri: "regkb://jurisdictions/us-ny/provisions" })).contents[0] as { text: string }).text);
    expect(ny.provisions).toEqual([{ citation: "N.Y. Gen. Bus. Law § 899-aa", heading: expect.any(String), source: expect.any(String), passages: 7 }]);
    const eu = JSON.parse(((await client.readResource({ uri: "regkb://jurisdictions/eu/provisions" })).contents[0] as { text: string }).text);
    expect(eu.provisions.length).toBe(99);
    await expect(client.readResource({ uri: "regkb://jurisdictions/us-ca/provisions" })).rejects.toThrow(/Resource not found/);
  });

  test("a bad or missing key is refused exactly as on /v1; GET answers 405", async () => {
    await expect(connect(`rk_live_${"x".repeat(40)}`)).rejects.toThrow();
    for (const authorization of [`Bearer rk_live_${"x".repeat(40)}`, "Basic abc", undefined]) {
      const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json, text/event-stream" };
      if (authorization) headers.authorization = authorization;
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
      const mcp = await fetch(`${url}/mcp`, { method: "POST", headers, body });
      const v1 = await fetch(`${url}/v1/search`, { method: "POST", headers, body });
      expect(mcp.status).toBe(401);
      expect(mcp.headers.get("www-authenticate")).toBe(v1.headers.get("www-authenticate"));
      expect(await mcp.json()).toEqual(await v1.json());
    }
    const get = await fetch(`${url}/mcp`, { headers: { authorization: `Bearer ${keys.a}`, accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});
