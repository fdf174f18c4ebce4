import type { Database } from "bun:sqlite";
import type { LedgerEntry, LedgerEntryType } from "../billing/ledger";
import { listEntries } from "../billing/store";

/**
 * Read-only views of the ledger for the dashboard: a type filter and spend per day. The
 * ledger's writer stays src/billing/ledger.ts; nothing here moves money.
 */
export const LEDGER_TYPES: readonly LedgerEntryType[] = ["top_up", "grant", "reserve", "settle", "release", "adjustment"];
export const DAY_MS = 86_400_000;

const ENTRY_COLUMNS = `id, org_id AS orgId, type, amount_pence AS amountPence, currency, description,
  idempotency_key AS key, ref, created_at_ms AS createdAtMs`;

/** Newest first, ties broken by id, like GET /v1/credits/ledger; optionally one type only. */
export function listLedgerPage(db: Database, orgId: string, options: { type?: LedgerEntryType; limit: number; offset: number }): LedgerEntry[] {
  if (!options.type) return listEntries(db, orgId, options.limit, options.offset);
  return db
    .query<LedgerEntry, [string, string, number, number]>(
      `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE org_id = ? AND type = ?
       ORDER BY created_at_ms DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(orgId, options.type, options.limit, options.offset);
}

/**
 * Spend since `sinceMs` per UTC day: charges (settle entries) less automatic refunds
 * (`refund:` adjustments). Holds are not spend until they settle.
 */
export function spendByDay(db: Database, orgId: string, sinceMs: number): Map<number, number> {
  const rows = db
    .query<{ day: number; spendPence: number }, [number, string, number]>(
      `SELECT (created_at_ms / ?1) AS day, -SUM(amount_pence) AS spendPence FROM ledger_entries
       WHERE org_id = ?2 AND created_at_ms >= ?3
         AND (type = 'settle' OR (type = 'adjustment' AND idempotency_key LIKE 'refund:%'))
       GROUP BY day`,
    )
    .all(DAY_MS, orgId, sinceMs);
  return new Map(rows.map((r) => [r.day * DAY_MS, r.spendPence]));
}

export function spendSince(db: Database, orgId: string, sinceMs: number): number {
  let total = 0;
  for (const pence of spendByDay(db, orgId, sinceMs).values()) total += pence;
  return total;
}
