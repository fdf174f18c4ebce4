/**
 * ledger.charge() in a loop, as postgres-handle.ts and cluster.ts measure it: an organisation
 * funded for the run, then 2p charges each under its own search key, one transaction each.
 */
import { charge, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import type { SqlDatabase } from "../../src/db/sql-database";
import { uuidv7 } from "../../src/ids";

export const CHARGE_PENCE = 2;
const FUNDS_PENCE = 100_000_000;

/** A new organisation holding FUNDS_PENCE: enough for every charge a run makes. */
export function fundedOrganisation(db: SqlDatabase, name: string): string {
  const orgId = uuidv7();
  db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, ?, 0, ?)").run(orgId, name, Date.now());
  topUp(db, { orgId, amountPence: FUNDS_PENCE, key: ledgerKeys.operatorTopUp(orgId, "bench"), description: "bench", nowMs: Date.now() });
  return orgId;
}

/** Charges `orgId` until `count` charges are made or `untilMs` (performance.now()) passes; returns how many were made. */
export function chargeRepeatedly(db: SqlDatabase, orgId: string, keyPrefix: string, limits: { count: number; untilMs: number }): number {
  let made = 0;
  while (made < limits.count && performance.now() < limits.untilMs) {
    charge(db, { orgId, amountPence: CHARGE_PENCE, key: ledgerKeys.search(`${keyPrefix}-${made}`), description: "bench", nowMs: Date.now() });
    made++;
  }
  return made;
}
