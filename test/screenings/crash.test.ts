import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { databasePath } from "../../src/db/open";
import { tempDir } from "../helpers/server";

/**
 * Crash recovery for real: a server child process is SIGKILLed while a screening runs; a
 * new server on the same data directory finishes it and the organisation pays once.
 * Runs from source (`bun src/main.ts`) so it always tests the code in this tree.
 */
const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dataDir = tempDir("regkb-crash-");
const children: Subprocess[] = [];
const env = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  REGKB_LOG_LEVEL: "warn",
  // No warm sandbox children: they are not needed here and their start-up competes for CPU.
  REGKB_SANDBOX_POOL_SIZE: "0",
  // Test hook: 100 keywords × 40 ms gives a 4 s window to kill the server mid-run.
  REGKB_TEST_HOOK_SCREENING_KEYWORD_DELAY_MS: "40",
};

afterAll(() => {
  for (const child of children) child.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
});

function cli(...args: string[]): any {
  const run = Bun.spawnSync([process.execPath, MAIN, ...args, "--data-dir", dataDir, "--json"], { env, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`regkb ${args.join(" ")} failed: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!);
}

async function serve(): Promise<{ child: Subprocess<"ignore", "pipe", "ignore">; url: string }> {
  const child = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0", "--data-dir", dataDir], { env, stdout: "pipe", stderr: "ignore" });
  children.push(child);
  const reader = child.stdout.getReader();
  let text = "";
  const deadline = performance.now() + 30_000;
  while (performance.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
    const match = text.match(/regkb listening on (http:\/\/\S+)/);
    if (match) {
      reader.releaseLock();
      return { child, url: match[1]! };
    }
  }
  throw new Error(`server did not start; its output: ${text}`);
}

async function api(url: string, key: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

test("SIGKILL mid-screening: the restarted server completes the run and charges exactly once", async () => {
  const org = cli("org", "create", "--name", "Crash Co");
  const { key } = cli("key", "create", "--org", org.id);
  cli("credits", "top-up", "--org", org.id, "--amount-pence", "1000");

  const first = await serve();
  const keywords = Array.from({ length: 100 }, (_, i) => `breach notification duty ${i}`);
  const created = await api(first.url, key, "/v1/screenings", { keywords });
  expect(created.status).toBe(202);
  const { id } = created.body;

  // Wait until a worker holds it, let it get some way in, then kill the process outright.
  const deadline = performance.now() + 10_000;
  while ((await api(first.url, key, `/v1/screenings/${id}`)).body.status !== "running") {
    if (performance.now() > deadline) throw new Error("screening never started running");
    await Bun.sleep(10);
  }
  await Bun.sleep(400);
  first.child.kill("SIGKILL");
  await first.child.exited;

  const db = new Database(databasePath(dataDir), { readonly: true });
  const atCrash = db.query<{ status: string; attempts: number }, [string]>("SELECT status, attempts FROM runs WHERE id = ?").get(id)!;
  expect(atCrash).toEqual({ status: "running", attempts: 1 });

  // Same data directory: the dead process's lease is taken over at start-up.
  const second = await serve();
  let done: any;
  const finishBy = performance.now() + 30_000;
  do {
    await Bun.sleep(50);
    done = await api(second.url, key, `/v1/screenings/${id}`);
    if (performance.now() > finishBy) throw new Error(`screening still ${done.body.status} after restart`);
  } while (done.body.status === "pending" || done.body.status === "running");

  expect(done.body.status).toBe("completed");
  expect(done.body.results.map((r: { keyword: string }) => r.keyword)).toEqual(keywords);
  expect(db.query<{ attempts: number }, [string]>("SELECT attempts FROM runs WHERE id = ?").get(id)!.attempts).toBe(2);

  const entries = db
    .query<{ type: string; amount_pence: number; idempotency_key: string }, [string]>(
      "SELECT type, amount_pence, idempotency_key FROM ledger_entries WHERE ref = ? ORDER BY type",
    )
    .all(id);
  expect(entries).toEqual([
    { type: "release", amount_pence: 200, idempotency_key: `release:${id}` },
    { type: "reserve", amount_pence: -200, idempotency_key: `reserve:${id}` },
    { type: "settle", amount_pence: -200, idempotency_key: `settle:${id}` },
  ]);
  const credits = await api(second.url, key, "/v1/credits");
  expect(credits.body).toEqual({ balancePence: 800, heldPence: 0, availablePence: 800, currency: "GBP" });
  db.close();

  second.child.kill("SIGTERM");
  expect(await second.child.exited).toBe(0);
}, 60_000);
