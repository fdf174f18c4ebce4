// The binary's size limit, and the embedded files the build packs (scripts/build.ts) unpacking
// inside it: the sample corpus, the static embedder and the lexicon (a search), the API
// reference bundle, USE-lite (its weights and tfjs's wasm), and Pyodide with its standard
// library stored (an execution that imports from it, from a memory snapshot).
import { afterAll, expect, test } from "bun:test";
import { rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { BINARY_BYTES_MAX } from "../../scripts/build/limits";
import { requireBinary, runBinary } from "../helpers/binary";
import { tempDir } from "../helpers/server";

const workDirs: string[] = [];
const servers: ReturnType<typeof Bun.spawn>[] = [];
afterAll(() => {
  for (const server of servers) server.kill();
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
});

/** A data folder with one organisation (£1; `jurisdictions` if any) and its key; `regkb serve` on it. */
async function serve(env: Record<string, string>, setup: string[][], jurisdictions?: string): Promise<{ url: string; key: string }> {
  const workDir = tempDir("regkb-assets-");
  workDirs.push(workDir);
  const dataDir = join(workDir, "data");
  const cli = (...args: string[]) => {
    const run = runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: workDir, env });
    if (run.exitCode !== 0) throw new Error(`regkb ${args.join(" ")}: ${run.stderr}`);
    return run.json;
  };
  for (const args of setup) cli(...args);
  const org = cli("org", "create", "--name", "Assets Bank", ...(jurisdictions ? ["--jurisdictions", jurisdictions] : []));
  cli("credits", "top-up", "--org", org.id, "--amount-pence", "100");
  const key = cli("key", "create", "--org", org.id).key as string;
  const child = Bun.spawn([requireBinary(), "serve", "--port", "0", "--data-dir", dataDir], {
    cwd: workDir,
    env: { PATH: "/usr/bin:/bin", HOME: "/tmp", REGKB_LOG_LEVEL: "error", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  servers.push(child);
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let seen = "";
  while (!/listening on (http:\/\/\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited: ${seen} ${await new Response(child.stderr as ReadableStream).text()}`);
    seen += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { url: /listening on (http:\/\/\S+)/.exec(seen)![1]!, key };
}

async function api(server: { url: string; key: string }, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method: body ? "POST" : "GET",
    headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as any };
}

test("dist/regkb is at most 150 MB", () => {
  expect(statSync(requireBinary()).size).toBeLessThanOrEqual(BINARY_BYTES_MAX);
});

test("the packed corpus, static embedder, lexicon, API reference bundle and Pyodide standard library work inside the binary", async () => {
  const server = await serve({ REGKB_SANDBOX_POOL_SIZE: "1" }, [["corpus", "import", "--sample"]], "eu,us");
  const search = await api(server, "/v1/search", { query: "notify the supervisory authority of a personal data breach", topK: 3 });
  expect(search.status).toBe(200);
  expect(JSON.stringify(search.body.results[0])).toContain("Article 33");

  const scalar = await fetch(`${server.url}/v1/docs/assets/scalar.js`);
  const shipped = await Bun.file(join(import.meta.dir, "..", "..", "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js")).bytes();
  expect(new Uint8Array(await scalar.arrayBuffer())).toEqual(shipped);

  const code = "import json, textwrap, decimal\nprint(json.dumps({'ok': str(decimal.Decimal('1.10') * 3)}))";
  const created = await api(server, "/v1/executions", { code, timeoutSeconds: 30 });
  expect(created.status).toBe(202);
  let run = created;
  for (const deadlineMs = Date.now() + 90_000; run.body.status !== "completed" && run.body.status !== "failed" && Date.now() < deadlineMs; ) {
    await Bun.sleep(100);
    run = await api(server, `/v1/executions/${created.body.id}`);
  }
  expect(run.body).toMatchObject({ status: "completed", exitCode: 0, stdout: '{"ok": "3.30"}\n' });
}, 120_000);

test("USE-lite loads inside the binary (its packed weights, tfjs's packed wasm) and embeds a query", async () => {
  const server = await serve({ REGKB_EMBEDDER: "use-lite", REGKB_SANDBOX_POOL_SIZE: "0" }, []);
  const search = await api(server, "/v1/search", { query: "breach notification deadline", topK: 3 });
  expect(search.status).toBe(200);
  expect(search.body.results).toEqual([]);
}, 60_000);
