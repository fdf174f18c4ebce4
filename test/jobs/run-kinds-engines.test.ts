// The paid kinds of run (screenings, executions) on SQLite and on PostgreSQL through the
// synchronous handle (test/helpers/engines.ts): created with their hold, executed by a real
// RunEngine over the engine's database (screenings search a real index, executions run in
// real Pyodide sandboxes), completed with the hold settled and returned exactly once, or
// failed with it returned; the credit and `verifyLedger` agree afterwards.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { executionCostPence, executionReservePence, screeningPence } from "../../src/billing/pricing";
import { getBalance, topUp, verifyLedger } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { listEntries } from "../../src/billing/store";
import { replaceOrganisationJurisdictions, upsertJurisdiction } from "../../src/auth/store";
import { systemClock } from "../../src/clock";
import { openDatabase } from "../../src/db/open";
import type { SqlDatabase } from "../../src/db/sql-database";
import { immediate } from "../../src/db/transaction";
import type { SandboxPool } from "../../src/executions/sandbox/pool";
import { createExecution, EXECUTION_RUN_KIND, executionRunKind, getExecution } from "../../src/executions/service";
import { uuidv7 } from "../../src/ids";
import { RunEngine } from "../../src/jobs/engine";
import { claimNextRun } from "../../src/jobs/store";
import { createLogger } from "../../src/log";
import { Metrics } from "../../src/metrics";
import { indexDocument } from "../../src/search/indexing";
import { createScreening, getScreening, SCREENING_RUN_KIND, screeningRunKind } from "../../src/screenings/service";
import { createTestPool } from "../executions/pool-helper";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

const CREDIT_PENCE = 1_000;
const LEASE_MS = 2_000;

let pool: SandboxPool;
beforeAll(async () => {
  pool = await createTestPool(1);
}, 120_000);
afterAll(() => pool.stop());

forEachEngine((current) => {
  let engine: TestEngine;
  let jobs: RunEngine<SqlDatabase>;
  let deps: Parameters<typeof screeningRunKind>[0] & Parameters<typeof executionRunKind>[0];
  let cleanup = () => {};

  beforeAll(async () => {
    engine = current();
    // The node's own search index (on one node it shares the database; apart here on both engines alike).
    const indexDir = tempDir("regkb-run-kinds-index-");
    const indexDb = await openDatabase(indexDir);
    cleanup = () => {
      indexDb.close();
      rmSync(indexDir, { recursive: true, force: true });
    };
    const eu = { slug: "eu", name: "European Union", description: "EU law" };
    upsertJurisdiction(indexDb, eu);
    upsertJurisdiction(engine.db, eu);
    const searchIndex = await readySearchIndex(indexDb);
    await indexDocument(
      { searchIndex },
      {
        documentId: "run-kinds-corpus",
        ownerOrgId: null,
        jurisdictions: ["eu"],
        passages: [{ source: "GDPR Article 33", citationPath: "GDPR Article 33", text: "The controller shall notify a personal data breach within 72 hours.", position: 0 }],
      },
    );
    const log = createLogger("silent");
    jobs = new RunEngine<SqlDatabase>({
      // One attempt, so a run whose worker died is failed (its hold returned) at its first recovery.
      config: { runLeaseMs: LEASE_MS, runMaxAttempts: 1, shutdownTimeoutMs: 10_000, runsPerOrganisationMax: 0 },
      db: engine.db,
      clock: systemClock,
      log,
      metrics: new Metrics(),
    });
    deps = {
      db: engine.db,
      clock: systemClock,
      jobs,
      searchIndex,
      log,
      sandbox: pool,
      config: { screeningConcurrency: 2, testHookScreeningKeywordDelayMs: 0, executionConcurrency: 1 },
    };
    jobs.register(screeningRunKind(deps));
    jobs.register(executionRunKind(deps));
    await jobs.start();
  });
  afterAll(async () => {
    await jobs.stop();
    cleanup();
  });

  const funded = (name: string) => {
    const orgId = engine.createOrganisation(name);
    topUp(engine.db, { orgId, amountPence: CREDIT_PENCE, key: ledgerKeys.operatorTopUp(orgId), description: "test credit", nowMs: Date.now() });
    immediate(engine.db, () => replaceOrganisationJurisdictions(engine.db, orgId, ["eu"]));
    return orgId;
  };

  /** The run's ledger entries as [type, pence, key], in key order. */
  const entriesOf = (orgId: string, runId: string) =>
    listEntries(engine.db, orgId, 100, 0)
      .filter((e) => e.ref === runId)
      .map((e): readonly [string, number, string] => [e.type, e.amountPence, e.key])
      .sort((a, b) => (a[2] < b[2] ? -1 : 1));

  const untilStatus = async (read: () => { status: string }, statuses: string[], timeoutMs = 60_000) => {
    const deadline = performance.now() + timeoutMs;
    while (!statuses.includes(read().status)) {
      if (performance.now() > deadline) throw new Error(`still ${read().status} after ${timeoutMs} ms`);
      await Bun.sleep(20);
    }
  };

  /** Waits a recovery period and more, then checks nothing moved: each step happened once. */
  const settledOnce = async (orgId: string, runId: string, expected: readonly (readonly [string, number, string])[]) => {
    expect(entriesOf(orgId, runId)).toEqual([...expected].sort((a, b) => (a[2] < b[2] ? -1 : 1)));
    await Bun.sleep(LEASE_MS);
    expect(entriesOf(orgId, runId)).toEqual([...expected].sort((a, b) => (a[2] < b[2] ? -1 : 1)));
  };

  test("a screening is created with its hold, searched by the engine, and settled once: hold returned, keywords × 2p charged", async () => {
    const orgId = funded("Screener");
    const id = uuidv7();
    const created = createScreening(deps, orgId, id, { keywords: ["personal data breach", "72 hours"] });
    const pence = screeningPence(2);
    expect(created).toEqual({ id, status: "pending", estimatedCostPence: pence });
    await untilStatus(() => getScreening(deps, orgId, id), ["completed", "failed"]);
    const screening = getScreening(deps, orgId, id);
    expect(screening).toMatchObject({ status: "completed", jurisdictions: ["eu"] });
    expect(screening.results!.map((r) => r.keyword)).toEqual(["personal data breach", "72 hours"]);
    expect(screening.results![0]!.matches[0]!.citationPath).toBe("GDPR Article 33");
    await settledOnce(orgId, id, [
      ["reserve", -pence, `reserve:${id}`],
      ["release", pence, `release:${id}`],
      ["settle", -pence, `settle:${id}`],
    ]);
    expect(getBalance(engine.db, orgId)).toMatchObject({ balancePence: CREDIT_PENCE - pence, heldPence: 0, availablePence: CREDIT_PENCE - pence });
    expect(verifyLedger(engine.db).ok).toBe(true);
  }, 60_000);

  test("an execution runs in a real sandbox and is charged its wall-clock cost once, the rest of its hold returned", async () => {
    const orgId = funded("Executor");
    const id = uuidv7();
    const timeoutSeconds = 20;
    const created = createExecution(deps, orgId, id, { code: "print(6 * 7)", timeoutSeconds });
    const heldPence = executionReservePence(timeoutSeconds);
    expect(created.estimatedCostPence).toBe(heldPence);
    expect(getBalance(engine.db, orgId).heldPence).toBe(heldPence);
    await untilStatus(() => getExecution(deps, orgId, id), ["completed", "failed"], 120_000);
    const execution = getExecution(deps, orgId, id);
    expect(execution).toMatchObject({ status: "completed", exitCode: 0, stdout: "42\n", error: null });
    const costPence = executionCostPence(execution.durationMs!, timeoutSeconds);
    expect(costPence).toBeLessThan(heldPence);
    await settledOnce(orgId, id, [
      ["reserve", -heldPence, `reserve:${id}`],
      ["release", heldPence, `release:${id}`],
      ["settle", -costPence, `settle:${id}`],
    ]);
    expect(getBalance(engine.db, orgId)).toMatchObject({ balancePence: CREDIT_PENCE - costPence, heldPence: 0 });
    expect(verifyLedger(engine.db).ok).toBe(true);
  }, 150_000);

  test("a screening whose worker died on its last attempt fails with its hold returned once, nothing charged", async () => {
    const orgId = funded("Abandoned");
    const id = uuidv7();
    createScreening(deps, orgId, id, { keywords: ["breach"] });
    // Another host's worker claims it before this engine's wake-up runs, then never renews its lease.
    const dead = claimNextRun(engine.db, { kind: SCREENING_RUN_KIND, owner: `elsewhere.invalid/1/${uuidv7()}`, nowMs: Date.now(), leaseMs: 1 });
    expect(dead?.id).toBe(id);
    await untilStatus(() => getScreening(deps, orgId, id), ["completed", "failed"]);
    expect(getScreening(deps, orgId, id)).toMatchObject({ status: "failed", error: "run abandoned after 1 attempts: its worker stopped before finishing" });
    const pence = screeningPence(1);
    await settledOnce(orgId, id, [
      ["reserve", -pence, `reserve:${id}`],
      ["release", pence, `release:${id}`],
    ]);
    expect(getBalance(engine.db, orgId)).toMatchObject({ balancePence: CREDIT_PENCE, heldPence: 0 });
    expect(verifyLedger(engine.db).ok).toBe(true);
  }, 60_000);

  test("an execution refused for want of credit leaves neither a hold nor a run", () => {
    const orgId = engine.createOrganisation("Penniless");
    const id = uuidv7();
    expect(() => createExecution(deps, orgId, id, { code: "print(1)", timeoutSeconds: 10 })).toThrow(expect.objectContaining({ code: "insufficient_credit" }));
    expect(() => getExecution(deps, orgId, id)).toThrow(/does not exist/);
    expect(listEntries(engine.db, orgId, 10, 0)).toEqual([]);
    expect(engine.db.query<{ n: number }, [string, string]>("SELECT count(*) AS n FROM runs WHERE org_id = ? AND kind = ?").get(orgId, EXECUTION_RUN_KIND)!.n).toBe(0);
  });
});
