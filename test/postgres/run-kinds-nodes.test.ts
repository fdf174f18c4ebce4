// Screenings on several nodes sharing one PostgreSQL database: real child processes
// (run-kinds-node.ts), each with its own synchronous handle and search index, running the
// screening service and the run engine as a server does. The same screening created on two
// nodes at once is created once; runs of a node SIGKILLed while it holds their leases are
// finished once by another, every hold returned and the ledger consistent; and an engine
// listening on PostgreSQL picks up a run created on another node long before it would poll.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { replaceOrganisationJurisdictions, upsertJurisdiction } from "../../src/auth/store";
import { getBalance, topUp, verifyLedger } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { screeningPence } from "../../src/billing/pricing";
import { listEntries } from "../../src/billing/store";
import { systemClock } from "../../src/clock";
import { openDatabase } from "../../src/db/open";
import type { PostgresHandle } from "../../src/db/postgres/sync/handle";
import { immediate } from "../../src/db/transaction";
import { uuidv7 } from "../../src/ids";
import { RunEngine } from "../../src/jobs/engine";
import { createLogger } from "../../src/log";
import { Metrics } from "../../src/metrics";
import { createScreening, getScreening, type ScreeningDeps } from "../../src/screenings/service";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell, type NodeProcess } from "../helpers/node-processes";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

const NODE_SCRIPT = join(import.meta.dir, "run-kinds-node.ts");
const CREDIT_PENCE = 10_000;

describe("screenings on several nodes sharing one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  /** This process creates screenings as a node that runs none (its engine is never started). */
  let deps: ScreeningDeps;
  let cleanup = () => {};
  const started: NodeProcess[] = [];

  beforeAll(async () => {
    pg = engine();
    upsertJurisdiction(pg.db, { slug: "eu", name: "European Union", description: "EU law" });
    const indexDir = tempDir("regkb-run-kinds-nodes-");
    const indexDb = await openDatabase(indexDir);
    cleanup = () => {
      indexDb.close();
      rmSync(indexDir, { recursive: true, force: true });
    };
    const log = createLogger("silent");
    const metrics = new Metrics();
    const jobs = new RunEngine<PostgresHandle>({
      config: { runLeaseMs: 60_000, runMaxAttempts: 3, shutdownTimeoutMs: 5_000, runsPerOrganisationMax: 0 },
      db: pg.db as PostgresHandle,
      clock: systemClock,
      log,
      metrics,
    });
    deps = {
      db: pg.db,
      clock: systemClock,
      jobs,
      searchIndex: await readySearchIndex(indexDb),
      config: { screeningConcurrency: 1, testHookScreeningKeywordDelayMs: 0 },
    };
  });
  afterAll(async () => {
    for (const node of started) node.proc.kill("SIGKILL");
    await Promise.all(started.map((node) => node.proc.exited));
    cleanup();
  });

  const start = async (argsPerNode: string[][]) => {
    const nodes = await startNodes(NODE_SCRIPT, argsPerNode);
    started.push(...nodes);
    return nodes;
  };

  /** An engine node (lease, poll interval, listening or not, delay per keyword), started; returns it and its lease owner. */
  const startEngine = async (leaseMs: number, pollMs: number, listen: boolean, keywordDelayMs: number) => {
    const [node] = await start([["engine", pg.url!, String(leaseMs), String(pollMs), listen ? "1" : "0", String(keywordDelayMs)]]);
    tell(node!, "go");
    const { owner } = JSON.parse(await nextLine(node!, "its owner")) as { owner: string };
    return { node: node!, owner };
  };

  const stopEngine = async (node: NodeProcess) => {
    tell(node, "stop");
    expect(await nextLine(node, "stopped")).toBe("stopped");
    expect(await node.proc.exited).toBe(0);
  };

  const funded = (name: string) => {
    const orgId = pg.createOrganisation(name);
    topUp(pg.db, { orgId, amountPence: CREDIT_PENCE, key: ledgerKeys.operatorTopUp(orgId), description: "test credit", nowMs: Date.now() });
    immediate(pg.db, () => replaceOrganisationJurisdictions(pg.db, orgId, ["eu"]));
    return orgId;
  };

  const entryTypes = (orgId: string, runId: string) =>
    listEntries(pg.db, orgId, 500, 0)
      .filter((e) => e.ref === runId)
      .map((e) => e.type)
      .sort();

  test("the same screening created on two nodes at once: one run and one hold, and both get the same answer", async () => {
    const orgId = funded("Twice");
    const id = uuidv7();
    const [other] = await start([["create-held", pg.url!, orgId, id]]);
    tell(other!, "go");
    // The other node's run and hold exist, uncommitted, while this node creates the same screening.
    expect(await nextLine(other!, "holding")).toBe("holding");
    const here = createScreening(deps, orgId, id, { keywords: ["breach"] });
    expect(await nextLine(other!, "committed")).toBe("committed");
    expect(here).toEqual({ id, status: "pending", estimatedCostPence: screeningPence(1) });
    expect(getScreening(deps, orgId, id).status).toBe("pending");
    expect(entryTypes(orgId, id)).toEqual(["reserve"]);
    expect(pg.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM runs WHERE id = ?").get(id)!.n).toBe(1);
    expect(getBalance(pg.db, orgId)).toMatchObject({ balancePence: CREDIT_PENCE, heldPence: screeningPence(1) });
    expect(verifyLedger(pg.db).ok).toBe(true);
  }, 60_000);

  test("two engines serve 40 screenings; one is SIGKILLed holding leases: every run completes once, every hold returned", async () => {
    const leaseMs = 1_500;
    const orgIds = [funded("Nodes A"), funded("Nodes B"), funded("Nodes C"), funded("Nodes D")];
    const before = new Map(orgIds.map((orgId) => [orgId, getBalance(pg.db, orgId).balancePence]));
    // A keyword takes 100 ms or more, so a run is in progress for a while: the victim holds leases when killed.
    const victim = await startEngine(leaseMs, 200, true, 100);
    const survivor = await startEngine(leaseMs, 200, true, 100);
    const runs: { id: string; orgId: string; keywords: number }[] = [];
    for (let n = 0; n < 40; n++) {
      const orgId = orgIds[n % orgIds.length]!;
      const keywords = 1 + (n % 3);
      const id = uuidv7();
      createScreening(deps, orgId, id, { keywords: Array.from({ length: keywords }, (_, k) => `breach ${k}`) });
      runs.push({ id, orgId, keywords });
    }
    const leasedBy = (owner: string) =>
      pg.db.query<{ id: string }, [string]>("SELECT id FROM runs WHERE lease_owner = ? AND status = 'running'").all(owner).map((r) => r.id);
    // Frozen before it is killed, so the runs it holds when it dies are known.
    let held: string[] = [];
    await until(() => {
      if (leasedBy(victim.owner).length === 0) return false;
      victim.node.proc.kill("SIGSTOP");
      held = leasedBy(victim.owner);
      if (held.length === 0) victim.node.proc.kill("SIGCONT");
      return held.length > 0;
    });
    victim.node.proc.kill("SIGKILL");
    await victim.node.proc.exited;
    const unfinished = () =>
      pg.db.query<{ n: number }, []>("SELECT count(*) AS n FROM runs WHERE kind = 'screening' AND status IN ('pending', 'running')").get()!.n;
    await until(() => unfinished() === 0, 90_000);
    await Bun.sleep(2 * leaseMs); // time enough for a second completion, should one happen

    // The killed node's runs were taken over and completed on their second attempt.
    const attempts = held.map((id) => pg.db.query<{ attempts: number }, [string]>("SELECT attempts FROM runs WHERE id = ?").get(id)!.attempts);
    expect(attempts).toContain(2);
    for (const run of runs) {
      expect(getScreening(deps, run.orgId, run.id).status).toBe("completed");
      expect(entryTypes(run.orgId, run.id)).toEqual(["release", "reserve", "settle"]);
    }
    for (const orgId of orgIds) {
      const spentPence = runs.filter((r) => r.orgId === orgId).reduce((sum, r) => sum + screeningPence(r.keywords), 0);
      expect(getBalance(pg.db, orgId)).toMatchObject({ balancePence: before.get(orgId)! - spentPence, heldPence: 0 });
    }
    expect(verifyLedger(pg.db).ok).toBe(true);
    await stopEngine(survivor.node);
  }, 150_000);

  test("an engine listening on PostgreSQL picks up a run created on another node at once, not at its next poll (30 s)", async () => {
    const orgId = funded("Listener");
    const { node } = await startEngine(60_000, 30_000, true, 0);
    const id = uuidv7();
    const createdAt = performance.now();
    createScreening(deps, orgId, id, { keywords: ["breach"] });
    await until(() => getScreening(deps, orgId, id).status === "completed", 10_000);
    const ms = performance.now() - createdAt;
    expect(ms).toBeLessThan(10_000);
    expect(entryTypes(orgId, id)).toEqual(["release", "reserve", "settle"]);
    await stopEngine(node);
  }, 60_000);
});

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not reached in time");
    await Bun.sleep(20);
  }
}
