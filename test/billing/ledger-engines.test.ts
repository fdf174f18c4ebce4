// The ledger's own calls and the billing store's reads, on SQLite and on PostgreSQL through
// the synchronous handle (test/helpers/engines.ts): the same code, the same answers.
import { beforeAll, expect, test } from "bun:test";
import {
  charge,
  chargeRefundable,
  getBalance,
  grant,
  refundCharge,
  reserve,
  settleAndRelease,
  topUp,
  verifyLedger,
} from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { findOrganisationsDueAllowance, listEntries, listEntriesOfType, readAllowance, spendPenceByPeriod } from "../../src/billing/store";
import { Refusal } from "../../src/errors";
import { forEachEngine, type TestEngine } from "../helpers/engines";

const DAY_MS = 86_400_000;

forEachEngine((current) => {
  let engine: TestEngine;
  beforeAll(() => {
    engine = current();
  });

  const funded = (name: string, pence: number, allowancePence = 0) => {
    const orgId = engine.createOrganisation(name, allowancePence);
    topUp(engine.db, { orgId, amountPence: pence, key: ledgerKeys.operatorTopUp(orgId, "initial"), description: "initial credit", nowMs: 1_000 });
    return orgId;
  };

  test("50 charges of 2p against 40p, interleaved in one process: exactly 20 succeed, 30 get 402", async () => {
    const orgId = funded("Direct calls", 40);
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        await Promise.resolve();
        try {
          charge(engine.db, { orgId, amountPence: 2, key: ledgerKeys.search(`direct-${orgId}-${i}`), description: "Test", nowMs: Date.now() });
          return 200;
        } catch (error) {
          if (error instanceof Refusal && error.status === 402) return 402;
          throw error;
        }
      }),
    );
    expect(outcomes.filter((s) => s === 200).length).toBe(20);
    expect(getBalance(engine.db, orgId)).toEqual({ balancePence: 0, heldPence: 0, availablePence: 0, currency: "GBP" });
  });

  test("entries newest first with ties broken by id, paginated; filtered by type", () => {
    const orgId = funded("Ordering", 100);
    for (let i = 0; i < 4; i++) {
      topUp(engine.db, { orgId, amountPence: 10 + i, key: ledgerKeys.operatorTopUp(orgId, `t${i}`), description: `T${i}`, nowMs: 5_000 });
    }
    const all = listEntries(engine.db, orgId, 50, 0);
    expect(all.map((e) => e.description)).toEqual(["T3", "T2", "T1", "T0", "initial credit"]);
    expect(all[0]).toMatchObject({ orgId, type: "top_up", amountPence: 13, currency: "GBP", purpose: "operator_top_up", ref: null, createdAtMs: 5_000 });
    expect(listEntries(engine.db, orgId, 2, 1).map((e) => e.id)).toEqual(all.slice(1, 3).map((e) => e.id));
    expect(listEntriesOfType(engine.db, orgId, "settle", 10, 0)).toEqual([]);
  });

  test("entries cannot be edited or deleted", () => {
    const orgId = funded("Append-only", 100);
    expect(() => engine.db.query("UPDATE ledger_entries SET amount_pence = 1000 WHERE org_id = ?").run(orgId)).toThrow(/append-only/);
    expect(() => engine.db.query("DELETE FROM ledger_entries WHERE org_id = ?").run(orgId)).toThrow(/append-only/);
  });

  test("a refunded search pays again under its next key; spend per day nets the refund; holds settle once", () => {
    const orgId = funded("Refunds and runs", 100);
    const key = ledgerKeys.search(`op-${orgId}`);
    const first = chargeRefundable(engine.db, { orgId, amountPence: 2, key, description: "search", nowMs: DAY_MS });
    refundCharge(engine.db, { charge: first, description: "search failed", nowMs: DAY_MS });
    const second = chargeRefundable(engine.db, { orgId, amountPence: 2, key, description: "search", nowMs: 2 * DAY_MS });
    expect(second.key.key).toBe(`${key.key}:retry-1`);
    expect(chargeRefundable(engine.db, { orgId, amountPence: 2, key, description: "search", nowMs: 2 * DAY_MS }).entry.id).toBe(second.entry.id);
    reserve(engine.db, { orgId, amountPence: 10, runId: `run-${orgId}`, description: "hold", nowMs: 2 * DAY_MS });
    settleAndRelease(engine.db, { orgId, runId: `run-${orgId}`, actualPence: 4, description: "done", nowMs: 2 * DAY_MS });
    settleAndRelease(engine.db, { orgId, runId: `run-${orgId}`, actualPence: 4, description: "done", nowMs: 2 * DAY_MS });
    expect(getBalance(engine.db, orgId)).toEqual({ balancePence: 94, heldPence: 0, availablePence: 94, currency: "GBP" });
    expect([...spendPenceByPeriod(engine.db, orgId, 0, DAY_MS)].sort((a, b) => a[0] - b[0])).toEqual([
      [DAY_MS, 0],
      [2 * DAY_MS, 6],
    ]);
  });

  test("the monthly allowance: due until granted, granted once", () => {
    const orgId = funded("Allowance", 1, 500);
    expect(readAllowance(engine.db, orgId, ledgerKeys.monthlyGrant(orgId, "2025-03").key)).toEqual({ allowancePence: 500, granted: false });
    expect(findOrganisationsDueAllowance(engine.db, "2025-03", 1_000)).toContain(orgId);
    expect(grant(engine.db, { orgId, amountPence: 500, month: "2025-03", nowMs: 1 }).created).toBe(true);
    expect(grant(engine.db, { orgId, amountPence: 500, month: "2025-03", nowMs: 2 }).created).toBe(false);
    expect(readAllowance(engine.db, orgId, ledgerKeys.monthlyGrant(orgId, "2025-03").key)).toEqual({ allowancePence: 500, granted: true });
    expect(findOrganisationsDueAllowance(engine.db, "2025-03", 1_000)).not.toContain(orgId);
  });

  test("verifyLedger passes, and notices running totals edited behind the ledger's back", () => {
    const orgId = funded("Verified", 100);
    expect(verifyLedger(engine.db).ok).toBe(true);
    engine.db.query("UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ?").run(orgId);
    const report = verifyLedger(engine.db);
    expect(report.ok).toBe(false);
    expect(report.mismatches).toEqual([{ orgId, problem: "stored balance 101/held 0, entries give 100/0" }]);
    engine.db.query("UPDATE credit_balances SET balance_pence = balance_pence - 1 WHERE org_id = ?").run(orgId);
    expect(verifyLedger(engine.db).ok).toBe(true);
  });
});
