import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { TEST_SANDBOX_CACHE_DIR } from "../executions/pool-helper";
import { seedCorpus } from "../screenings/fixtures";
import { startTestServer, tempDir, type TestOrg, type TestServer } from "../helpers/server";

/**
 * Fairness with real runs over real HTTP: a noisy organisation queues a backlog, a quiet one
 * asks for one small run, and the quiet run is the next one claimed when a slot frees.
 */
const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.stop();
});

interface RunRow {
  id: string;
  org_id: string;
  status: string;
  attempts: number;
  started_at_ms: number;
}

function claimOrder(server: TestServer, ids: string[]): string[] {
  const rows = server.deps.db.query<RunRow, []>(`SELECT id, org_id, status, attempts, started_at_ms FROM runs`).all();
  return rows.filter((r) => ids.includes(r.id)).sort((a, b) => a.started_at_ms - b.started_at_ms || (a.id < b.id ? -1 : 1)).map((r) => r.id);
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 90_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error("condition not reached in time");
    await Bun.sleep(20);
  }
}

/** Every run finished once: completed at the first attempt, its hold reserved, released and settled exactly once. */
function expectEachRanOnce(server: TestServer, ids: string[]): void {
  const rows = server.deps.db.query<RunRow, []>(`SELECT id, org_id, status, attempts, started_at_ms FROM runs`).all().filter((r) => ids.includes(r.id));
  expect(rows.map((r) => [r.status, r.attempts])).toEqual(ids.map(() => ["completed", 1]));
  for (const id of ids) {
    const types = server.deps.db.query<{ type: string }, [string]>("SELECT type FROM ledger_entries WHERE ref = ? ORDER BY type").all(id).map((e) => e.type);
    expect(types).toEqual(["release", "reserve", "settle"]);
  }
  expect(verifyLedger(server.deps.db).ok).toBe(true);
}

describe("screenings: one slot, a noisy backlog", () => {
  test("the quiet organisation's screening starts at the next free slot, not after the backlog; nothing runs twice or is lost", async () => {
    const server = await startTestServer({
      env: { REGKB_SCREENING_CONCURRENCY: "1", REGKB_TEST_HOOK_SCREENING_KEYWORD_DELAY_MS: "50" },
    });
    servers.push(server);
    await seedCorpus(server.deps);
    const noisy = server.createOrg({ name: "Noisy", balancePence: 1000 });
    const quiet = server.createOrg({ name: "Quiet", balancePence: 100 });
    const screen = async (org: TestOrg, keywords: string[]) => {
      const res = await server.api("/v1/screenings", { key: org.key, body: { keywords } });
      expect(res.status).toBe(202);
      return res.body.id as string;
    };
    const backlog: string[] = [];
    for (let i = 0; i < 5; i++) backlog.push(await screen(noisy, ["breach", "notify", "authority", `record ${i}`]));
    await until(async () => (await server.api(`/v1/screenings/${backlog[0]}`, { key: noisy.key })).body.status === "running");
    const small = await screen(quiet, ["breach"]);

    const all = [...backlog, small];
    await until(() => server.deps.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM runs WHERE status IN ('pending', 'running')`).get()!.n === 0);
    expect(claimOrder(server, all)).toEqual([...backlog.slice(0, 1), small, ...backlog.slice(1)]);
    expectEachRanOnce(server, all);
    expect(getBalance(server.deps.db, noisy.orgId).balancePence).toBe(1000 - 5 * 4 * 2);
    expect(getBalance(server.deps.db, quiet.orgId).balancePence).toBe(100 - 2);
  }, 120_000);
});

describe("executions: two slots held by busy loops", () => {
  test("a quiet print(1) is claimed by the first slot that frees, ahead of the noisy organisation's queue", async () => {
    // Reuse the Pyodide files and memory snapshot the other sandbox tests made.
    const dataDir = tempDir();
    mkdirSync(TEST_SANDBOX_CACHE_DIR, { recursive: true });
    symlinkSync(TEST_SANDBOX_CACHE_DIR, join(dataDir, "cache"));
    const server = await startTestServer({ dataDir, env: { REGKB_SANDBOX_POOL_SIZE: "2", REGKB_EXECUTION_CONCURRENCY: "2" } });
    servers.push(server);
    const noisy = server.createOrg({ name: "Noisy", balancePence: 1000 });
    const quiet = server.createOrg({ name: "Quiet", balancePence: 100 });
    const execute = async (org: TestOrg, code: string, timeoutSeconds: number) => {
      const res = await server.api("/v1/executions", { key: org.key, body: { code, timeoutSeconds } });
      expect(res.status).toBe(202);
      return res.body.id as string;
    };
    const loops: string[] = [];
    for (let i = 0; i < 4; i++) loops.push(await execute(noisy, "while True: pass", 2));
    await until(async () => (await Promise.all(loops.slice(0, 2).map((id) => server.api(`/v1/executions/${id}`, { key: noisy.key })))).every((r) => r.body.status === "running"));
    const small = await execute(quiet, "print(1)", 10);

    const all = [...loops, small];
    await until(() => server.deps.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM runs WHERE status IN ('pending', 'running')`).get()!.n === 0, 110_000);
    const order = claimOrder(server, all);
    expect(order.slice(0, 2).sort()).toEqual(loops.slice(0, 2).sort());
    expect(order[2]).toBe(small);
    const done = (await server.api(`/v1/executions/${small}`, { key: quiet.key })).body;
    expect(done).toMatchObject({ status: "completed", exitCode: 0, stdout: "1\n" });
    for (const id of loops) expect((await server.api(`/v1/executions/${id}`, { key: noisy.key })).body.exitCode).toBe(124);
    expectEachRanOnce(server, all);
  }, 120_000);
});
