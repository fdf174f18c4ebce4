import { beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import * as ledger from "../../src/billing/ledger";
import { ledgerKeys, type LedgerKey } from "../../src/billing/ledger-keys";
import type { SqlDatabase } from "../../src/db/sql-database";
import { Refusal } from "../../src/errors";
import { forEachEngine, type EngineName, type TestEngine } from "../helpers/engines";

/**
 * Random sequences of every money movement, with failures injected inside the ledger's
 * transaction (a write that fails after earlier writes of the same call) and around it (the
 * caller's outer transaction failing after the ledger call returned). A reference model says
 * what each step must do; after every step the database must agree with the model and with
 * the definitions: available = Σ entries, balance = Σ top_up/grant/settle/adjustment,
 * held = −Σ reserve/release, stored totals = recomputed totals, available ≥ 0, no hold
 * resolved twice. Replay a failure with LEDGER_PROPERTY_SEED=<seed printed>. The same
 * property runs on SQLite and on PostgreSQL (fewer runs there: each statement is a round trip).
 */

const RUNS: Record<EngineName, number> = { sqlite: 40, postgres: 5 };
const OPS_PER_RUN_MIN = 260;
const OPS_PER_RUN_MAX = 300;
const ORGS_PER_RUN = 2;
const MONTHS = ["2025-01", "2025-02", "2025-03"];

type Inject = "none" | "inside" | "outer";

type Op =
  | { kind: "topUp"; org: number; amountPence: number; reuse: number | null }
  | { kind: "grant"; org: number; amountPence: number; month: number }
  | { kind: "charge"; org: number; amountPence: number; reuse: number | null }
  | { kind: "reserve"; org: number; amountPence: number; reuse: number | null }
  | { kind: "settleAndRelease"; run: number; actualPence: number }
  | { kind: "release"; run: number }
  | { kind: "refund"; org: number; amountPence: number; reuse: number | null }
  | { kind: "adjust"; org: number; amountPence: number };

const org = fc.integer({ min: 0, max: ORGS_PER_RUN - 1 });
const reuse = fc.option(fc.nat(), { freq: 4 });
const opArb: fc.Arbitrary<Op & { inject: Inject }> = fc
  .tuple(
    fc.oneof(
      fc.record({ kind: fc.constant("topUp" as const), org, amountPence: fc.integer({ min: 1, max: 300 }), reuse }),
      fc.record({ kind: fc.constant("grant" as const), org, amountPence: fc.integer({ min: 1, max: 200 }), month: fc.nat(MONTHS.length - 1) }),
      fc.record({ kind: fc.constant("charge" as const), org, amountPence: fc.integer({ min: 1, max: 80 }), reuse }),
      fc.record({ kind: fc.constant("reserve" as const), org, amountPence: fc.integer({ min: 1, max: 150 }), reuse }),
      fc.record({ kind: fc.constant("settleAndRelease" as const), run: fc.nat(), actualPence: fc.integer({ min: 0, max: 160 }) }),
      fc.record({ kind: fc.constant("release" as const), run: fc.nat() }),
      fc.record({ kind: fc.constant("refund" as const), org, amountPence: fc.integer({ min: 1, max: 50 }), reuse }),
      fc.record({ kind: fc.constant("adjust" as const), org, amountPence: fc.integer({ min: -100, max: 100 }).filter((n) => n !== 0) }),
    ),
    fc.constantFrom<Inject>("none", "none", "none", "none", "inside", "outer"),
  )
  .map(([op, inject]) => ({ ...op, inject }));

class InjectedFailure extends Error {}

type Outcome = "ok" | "noop" | "insufficient" | "invariant" | "injected";

interface Model {
  orgIds: string[];
  totals: Map<string, { balancePence: number; heldPence: number }>;
  /** Every key written, with what it holds: a replay must match. */
  keys: Map<string, { orgId: string; type: string; amountPence: number }>;
  keyList: { key: LedgerKey; kind: Op["kind"] }[];
  runs: { runId: string; orgId: string; heldPence: number; resolved: boolean }[];
  nextId: number;
}

let db: SqlDatabase;
let engine: TestEngine;
let orgCounter = 0;

/** Failure injection inside the ledger's own transaction: the next insert of a type listed in inject_failure aborts. */
function installFailureInjection(e: TestEngine): void {
  if (e.name === "sqlite") {
    e.db.exec("CREATE TEMP TABLE inject_failure (entry_type TEXT)");
    e.db.exec(`CREATE TEMP TRIGGER inject_failure_on_insert BEFORE INSERT ON main.ledger_entries
      WHEN NEW.type IN (SELECT entry_type FROM temp.inject_failure)
      BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    return;
  }
  // The file's own database: a plain table and trigger stand in for SQLite's temporary ones.
  e.db.exec(`CREATE TABLE inject_failure (entry_type TEXT);
    CREATE FUNCTION inject_failure() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.type IN (SELECT entry_type FROM inject_failure) THEN RAISE EXCEPTION 'injected failure'; END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER inject_failure_on_insert BEFORE INSERT ON ledger_entries FOR EACH ROW EXECUTE FUNCTION inject_failure();`);
}

function available(model: Model, orgId: string): number {
  const t = model.totals.get(orgId)!;
  return t.balancePence - t.heldPence;
}

/** What the step must do, and the model after it (applied only when it succeeds). */
function plan(model: Model, op: Op): { expected: Outcome; apply: () => void; lastType: string | null; call: () => void } {
  const t = (orgId: string) => model.totals.get(orgId)!;
  const keyed = <K extends LedgerKey>(kind: Op["kind"], reuseIndex: number | null, fresh: () => K): K => {
    const candidates = model.keyList.filter((k) => k.kind === kind);
    return reuseIndex !== null && candidates.length > 0 ? (candidates[reuseIndex % candidates.length]!.key as K) : fresh();
  };
  const freshId = () => `${model.nextId++}:${orgCounter}`;
  const writeOnce = (key: LedgerKey, kind: Op["kind"], orgId: string, type: string, amountPence: number, allowed: () => Outcome) => {
    const existing = model.keys.get(key.key);
    if (existing) {
      const same = existing.orgId === orgId && existing.type === type && existing.amountPence === amountPence;
      return { expected: (same ? "noop" : "invariant") as Outcome, apply: () => {} };
    }
    const expected = allowed();
    return {
      expected,
      apply: () => {
        model.keys.set(key.key, { orgId, type, amountPence });
        model.keyList.push({ key, kind });
        const totals = t(orgId);
        if (type === "reserve" || type === "release") totals.heldPence -= amountPence;
        else totals.balancePence += amountPence;
      },
    };
  };

  switch (op.kind) {
    case "topUp":
    case "refund":
    case "charge": {
      const orgId = model.orgIds[op.org]!;
      const key =
        op.kind === "topUp"
          ? keyed(op.kind, op.reuse, () => ledgerKeys.cardTopUp(freshId()))
          : op.kind === "refund"
            ? keyed(op.kind, op.reuse, () => ledgerKeys.documentRefund(freshId()))
            : keyed(op.kind, op.reuse, () => ledgerKeys.document(freshId()));
      const type = op.kind === "topUp" ? "top_up" : op.kind === "refund" ? "adjustment" : "settle";
      const signed = op.kind === "charge" ? -op.amountPence : op.amountPence;
      // A reused key may carry another amount or organisation: then it is a different write.
      const reused = model.keys.get(key.key);
      const targetOrg = reused && op.reuse !== null && op.org % 2 === 0 ? reused.orgId : orgId;
      const amount = reused && op.reuse !== null && op.amountPence % 2 === 0 ? reused.amountPence : signed;
      const w = writeOnce(key, op.kind, targetOrg, type, amount, () =>
        op.kind === "charge" && available(model, targetOrg) < -amount ? "insufficient" : "ok",
      );
      const magnitude = Math.abs(amount);
      const input = { orgId: targetOrg, amountPence: magnitude, description: `${op.kind} ${key.key}` };
      const call =
        key.purpose === "card_top_up"
          ? () => ledger.topUp(db, { ...input, key: key as LedgerKey<"card_top_up">, nowMs: Date.now() })
          : key.purpose === "document_refund"
            ? () => ledger.refund(db, { ...input, key: key as LedgerKey<"document_refund">, nowMs: Date.now() })
            : () => ledger.charge(db, { ...input, key: key as LedgerKey<"document">, nowMs: Date.now() });
      return { ...w, lastType: type, call };
    }
    case "grant": {
      const orgId = model.orgIds[op.org]!;
      const month = MONTHS[op.month]!;
      const key = ledgerKeys.monthlyGrant(orgId, month);
      const existing = model.keys.get(key.key);
      const call = () => ledger.grant(db, { orgId, amountPence: op.amountPence, month, nowMs: Date.now() });
      if (existing) return { expected: "noop", apply: () => {}, lastType: "grant", call };
      const w = writeOnce(key, "grant", orgId, "grant", op.amountPence, () => "ok");
      return { ...w, lastType: "grant", call };
    }
    case "reserve": {
      const orgId = model.orgIds[op.org]!;
      const runs = model.runs;
      const runId = op.reuse !== null && runs.length > 0 ? runs[op.reuse % runs.length]!.runId : `run-${model.nextId++}-${orgCounter}`;
      const known = runs.find((r) => r.runId === runId);
      const amountPence = known && op.amountPence % 2 === 0 ? known.heldPence : op.amountPence;
      const targetOrg = known ? known.orgId : orgId;
      const w = writeOnce(ledgerKeys.runHold(runId), "reserve", targetOrg, "reserve", -amountPence, () =>
        available(model, targetOrg) < amountPence ? "insufficient" : "ok",
      );
      return {
        expected: w.expected,
        apply: () => {
          w.apply();
          if (!known) runs.push({ runId, orgId: targetOrg, heldPence: amountPence, resolved: false });
        },
        lastType: "reserve",
        call: () => ledger.reserve(db, { orgId: targetOrg, amountPence, runId, description: `hold ${runId}`, nowMs: Date.now() }),
      };
    }
    case "settleAndRelease":
    case "release": {
      const run = model.runs.length > 0 ? model.runs[op.run % model.runs.length]! : null;
      const runId = run?.runId ?? `missing-${model.nextId++}`;
      const orgId = run?.orgId ?? model.orgIds[0]!;
      const actualPence = op.kind === "settleAndRelease" ? op.actualPence : 0;
      const call =
        op.kind === "settleAndRelease"
          ? () => ledger.settleAndRelease(db, { orgId, runId, actualPence, description: `settle ${runId}`, nowMs: Date.now() })
          : () => ledger.release(db, { orgId, runId, description: `release ${runId}`, nowMs: Date.now() });
      const lastType = op.kind === "settleAndRelease" ? "settle" : "release";
      if (!run) return { expected: "invariant", apply: () => {}, lastType, call };
      if (run.resolved) return { expected: "noop", apply: () => {}, lastType, call };
      if (actualPence > run.heldPence) return { expected: "invariant", apply: () => {}, lastType, call };
      return {
        expected: "ok",
        apply: () => {
          run.resolved = true;
          const totals = t(orgId);
          totals.heldPence -= run.heldPence;
          totals.balancePence -= actualPence;
          model.keys.set(ledgerKeys.runRelease(runId).key, { orgId, type: "release", amountPence: run.heldPence });
          if (op.kind === "settleAndRelease") model.keys.set(ledgerKeys.runSettle(runId).key, { orgId, type: "settle", amountPence: -actualPence });
        },
        lastType,
        call,
      };
    }
    case "adjust": {
      const orgId = model.orgIds[op.org]!;
      const key = ledgerKeys.operatorAdjustment(freshId());
      const w = writeOnce(key, "adjust", orgId, "adjustment", op.amountPence, () =>
        op.amountPence < 0 && available(model, orgId) < -op.amountPence ? "insufficient" : "ok",
      );
      return { ...w, lastType: "adjustment", call: () => ledger.adjust(db, { orgId, amountPence: op.amountPence, reason: "property test", key, nowMs: Date.now() }) };
    }
  }
}

function classify(error: unknown): Outcome {
  if (error instanceof InjectedFailure) return "injected";
  if (error instanceof Refusal && error.code === "insufficient_credit") return "insufficient";
  if (error instanceof ledger.LedgerInvariantError) return "invariant";
  if (error instanceof Error && error.message.includes("injected failure")) return "injected";
  throw error;
}

function run(model: Model, op: Op & { inject: Inject }): void {
  const step = plan(model, op);
  let outcome: Outcome;
  try {
    if (op.inject === "inside") db.query("INSERT INTO inject_failure (entry_type) VALUES (?)").run(step.lastType);
    if (op.inject === "outer") {
      db.transaction(() => {
        step.call();
        throw new InjectedFailure();
      }).immediate();
    } else {
      step.call();
    }
    outcome = step.expected === "noop" ? "noop" : "ok";
  } catch (error) {
    outcome = classify(error);
  } finally {
    db.exec("DELETE FROM inject_failure");
  }
  // A failure inside the ledger can only hit a step that writes; a failing outer transaction
  // hits every step that did not fail by itself. Either way nothing is written.
  const completes = step.expected === "ok" || step.expected === "noop";
  const expected: Outcome =
    (op.inject === "inside" && step.expected === "ok") || (op.inject === "outer" && completes) ? "injected" : step.expected;
  if (outcome !== expected) throw new Error(`step ${JSON.stringify(op)}: expected ${expected}, got ${outcome}`);
  if (outcome === "ok") step.apply();
  checkInvariants(db, model);
}

function checkInvariants(db: SqlDatabase, model: Model): void {
  for (const orgId of model.orgIds) {
    const sums = db
      .query<{ available: number; balance: number; held: number }, [string]>(
        `SELECT COALESCE(SUM(amount_pence), 0) AS available,
           COALESCE(SUM(CASE WHEN type IN ('top_up', 'grant', 'settle', 'adjustment') THEN amount_pence ELSE 0 END), 0) AS balance,
           COALESCE(-SUM(CASE WHEN type IN ('reserve', 'release') THEN amount_pence ELSE 0 END), 0) AS held
         FROM ledger_entries WHERE org_id = ?`,
      )
      .get(orgId)!;
    const stored = ledger.getBalance(db, orgId);
    const modelTotals = model.totals.get(orgId)!;
    const expected = {
      balancePence: modelTotals.balancePence,
      heldPence: modelTotals.heldPence,
      availablePence: modelTotals.balancePence - modelTotals.heldPence,
      currency: "GBP",
    };
    if (JSON.stringify(stored) !== JSON.stringify(expected)) throw new Error(`stored ${JSON.stringify(stored)} != model ${JSON.stringify(expected)}`);
    if (sums.available !== stored.availablePence || sums.balance !== stored.balancePence || sums.held !== stored.heldPence) {
      throw new Error(`entries give ${JSON.stringify(sums)}, stored ${JSON.stringify(stored)}`);
    }
    if (stored.availablePence < 0 || stored.heldPence < 0) throw new Error(`negative available or held: ${JSON.stringify(stored)}`);
    const open = model.runs.filter((r) => r.orgId === orgId && !r.resolved).reduce((s, r) => s + r.heldPence, 0);
    if (open !== stored.heldPence) throw new Error(`open holds ${open} != held ${stored.heldPence}`);
  }
  const twice = db
    .query<{ n: number }, [string, string]>(
      `SELECT COUNT(*) AS n FROM (SELECT ref FROM ledger_entries WHERE org_id IN (?, ?) AND type = 'release'
       GROUP BY ref HAVING COUNT(*) > 1) AS twice`,
    )
    .get(model.orgIds[0]!, model.orgIds[1]!)!.n;
  if (twice > 0) throw new Error("a hold was resolved twice");
}

function property(runs: number): void {
  const seed = Number(process.env.LEDGER_PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
  let operations = 0;
  const property = fc.property(fc.array(opArb, { minLength: OPS_PER_RUN_MIN, maxLength: OPS_PER_RUN_MAX }), (ops) => {
    orgCounter++;
    const orgIds = Array.from({ length: ORGS_PER_RUN }, (_, i) => engine.createOrganisation(`Property ${orgCounter}.${i}`));
    const model: Model = {
      orgIds,
      totals: new Map(orgIds.map((id) => [id, { balancePence: 0, heldPence: 0 }])),
      keys: new Map(),
      keyList: [],
      runs: [],
      nextId: 0,
    };
    for (const op of ops) {
      run(model, op);
      operations++;
    }
  });
  try {
    fc.assert(property, { seed, numRuns: runs, endOnFailure: true });
  } catch (error) {
    console.error(`ledger property failed; replay with LEDGER_PROPERTY_SEED=${seed}`);
    throw error;
  }
  expect(operations).toBeGreaterThanOrEqual(runs * OPS_PER_RUN_MIN);
  expect(ledger.verifyLedger(db).ok).toBe(true);
}

forEachEngine((current, name) => {
  beforeAll(() => {
    engine = current();
    db = engine.db;
    installFailureInjection(engine);
  });
  test(`ledger property: ≥ ${RUNS[name] * OPS_PER_RUN_MIN} random operations with injected failures keep every invariant`, () => {
    property(RUNS[engine.name]);
  }, 120_000);
});
