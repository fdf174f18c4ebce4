import type { SqlDatabase } from "../db/sql-database";
import type { LedgerEntry, LedgerEntryType } from "../billing/ledger";
import { listEntries, listEntriesOfType, spendPenceByPeriod } from "../billing/store";

/**
 * Read-only views of the ledger for the dashboard: a type filter and spend per day. The
 * ledger's writer stays src/billing/ledger.ts; nothing here moves money.
 */
export const LEDGER_TYPES: readonly LedgerEntryType[] = ["top_up", "grant", "reserve", "settle", "release", "adjustment"];
export const DAY_MS = 86_400_000;

/** Newest first, ties broken by id, like GET /v1/credits/ledger; optionally one type only. */
export function listLedgerPage(db: SqlDatabase, orgId: string, options: { type?: LedgerEntryType; limit: number; offset: number }): LedgerEntry[] {
  if (!options.type) return listEntries(db, orgId, options.limit, options.offset);
  return listEntriesOfType(db, orgId, options.type, options.limit, options.offset);
}

/** Spend since `sinceMs` per UTC day: charges less automatic refunds. Holds are not spend until they settle. */
export function spendByDay(db: SqlDatabase, orgId: string, sinceMs: number): Map<number, number> {
  return spendPenceByPeriod(db, orgId, sinceMs, DAY_MS);
}

export function spendSince(db: SqlDatabase, orgId: string, sinceMs: number): number {
  let total = 0;
  for (const pence of spendByDay(db, orgId, sinceMs).values()) total += pence;
  return total;
}
