import { forUpdate, isPostgres, type SqlDatabase } from "../db/sql-database";
import { monthlyGrantKeyParts, type LedgerEntryType, type LedgerPurpose } from "./ledger-keys";

export type { LedgerEntryType } from "./ledger-keys";

/** One immutable row of ledger_entries. amountPence is signed by its effect on available credit. */
export interface LedgerEntry {
  id: string;
  orgId: string;
  type: LedgerEntryType;
  amountPence: number;
  currency: "GBP";
  description: string;
  key: string;
  /** What the entry is for (ledger-keys.ts). */
  purpose: LedgerPurpose;
  ref: string | null;
  createdAtMs: number;
}

export interface Totals {
  balancePence: number;
  heldPence: number;
}

// Aliases are quoted: PostgreSQL folds unquoted names to lower case.
const ENTRY_COLUMNS = `id, org_id AS "orgId", type, amount_pence AS "amountPence", currency, description,
  idempotency_key AS key, purpose, ref, created_at_ms AS "createdAtMs"`;

/** Only src/billing/ledger.ts calls this: it is the one writer of money. */
export function insertEntry(db: SqlDatabase, e: LedgerEntry): void {
  db.query(
    `INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, purpose, ref, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(e.id, e.orgId, e.type, e.amountPence, e.currency, e.description, e.key, e.purpose, e.ref, e.createdAtMs);
}

export function findEntryByKey(db: SqlDatabase, key: string): LedgerEntry | null {
  return db.query<LedgerEntry, [string]>(`SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE idempotency_key = ?`).get(key);
}

export function readTotals(db: SqlDatabase, orgId: string): Totals | null {
  return db
    .query<Totals, [string]>(`SELECT balance_pence AS "balancePence", held_pence AS "heldPence" FROM credit_balances WHERE org_id = ?`)
    .get(orgId);
}

/**
 * Locks the organisation's running totals until the transaction ends (PostgreSQL; SQLite's
 * BEGIN IMMEDIATE already excludes every other writer), so every money movement of one
 * organisation, on any node, decides on totals and entries nobody else is changing.
 */
export function lockTotals(db: SqlDatabase, orgId: string): void {
  if (!isPostgres(db)) return;
  db.query<{ orgId: string }, [string]>(`SELECT org_id AS "orgId" FROM credit_balances WHERE org_id = ?${forUpdate(db)}`).get(orgId);
}

/** Newest first, ties broken by id (decisions.md); served by ledger_entries_by_org. */
export function listEntries(db: SqlDatabase, orgId: string, limit: number, offset: number): LedgerEntry[] {
  return db
    .query<LedgerEntry, [string, number, number]>(
      `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE org_id = ? ORDER BY created_at_ms DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(orgId, limit, offset);
}

/** listEntries of one type only (the dashboard's filter). */
export function listEntriesOfType(db: SqlDatabase, orgId: string, type: LedgerEntryType, limit: number, offset: number): LedgerEntry[] {
  return db
    .query<LedgerEntry, [string, string, number, number]>(
      `SELECT ${ENTRY_COLUMNS} FROM ledger_entries WHERE org_id = ? AND type = ?
       ORDER BY created_at_ms DESC, id DESC LIMIT ? OFFSET ?`,
    )
    .all(orgId, type, limit, offset);
}

/**
 * Spend since `sinceMs` per period of `periodMs` (keyed by the period's start): charges
 * (every settle) less automatic refunds. Holds are not spend until they settle.
 */
export function spendPenceByPeriod(db: SqlDatabase, orgId: string, sinceMs: number, periodMs: number): Map<number, number> {
  const rows = db
    .query<{ period: number; spendPence: number }, [number, string, number]>(
      `SELECT (created_at_ms / ?1) AS period, -SUM(amount_pence) AS "spendPence" FROM ledger_entries
       WHERE org_id = ?2 AND created_at_ms >= ?3
         AND (type = 'settle' OR purpose IN ('search_refund', 'document_refund'))
       GROUP BY period`,
    )
    .all(periodMs, orgId, sinceMs);
  return new Map(rows.map((r) => [r.period * periodMs, r.spendPence]));
}

/** An organisation's monthly allowance and whether this month's grant (its key) is written; null for an unknown organisation. */
export function readAllowance(db: SqlDatabase, orgId: string, grantKey: string): { allowancePence: number; granted: boolean } | null {
  const row = db
    .query<{ allowancePence: number; granted: number }, [string, string]>(
      `SELECT monthly_allowance_pence AS "allowancePence",
         EXISTS (SELECT 1 FROM ledger_entries WHERE idempotency_key = ?) AS granted
       FROM organisations WHERE id = ?`,
    )
    .get(grantKey, orgId);
  return row && { allowancePence: row.allowancePence, granted: row.granted === 1 };
}

/** Organisations with an allowance whose grant for `month` is not written yet, by id; served by the key's UNIQUE index. */
export function findOrganisationsDueAllowance(db: SqlDatabase, month: string, batchMax: number): string[] {
  const { before, after } = monthlyGrantKeyParts(month);
  return db
    .query<{ id: string }, [string, string, number]>(
      `SELECT id FROM organisations o
       WHERE monthly_allowance_pence > 0
         AND NOT EXISTS (SELECT 1 FROM ledger_entries WHERE idempotency_key = ? || o.id || ?)
       ORDER BY id LIMIT ?`,
    )
    .all(before, after, batchMax)
    .map((r) => r.id);
}

export interface RecomputedTotals extends Totals {
  orgId: string;
  storedBalancePence: number | null;
  storedHeldPence: number | null;
}

/** Totals recomputed from the entries alone, beside the stored running totals, for every organisation. */
export function recomputeTotals(db: SqlDatabase): RecomputedTotals[] {
  return db
    .query<RecomputedTotals, []>(
      `WITH sums AS (
         SELECT org_id,
           COALESCE(SUM(CASE WHEN type IN ('reserve', 'release') THEN 0 ELSE amount_pence END), 0) AS balance_pence,
           COALESCE(-SUM(CASE WHEN type IN ('reserve', 'release') THEN amount_pence ELSE 0 END), 0) AS held_pence
         FROM ledger_entries GROUP BY org_id)
       SELECT o.id AS "orgId", COALESCE(s.balance_pence, 0) AS "balancePence", COALESCE(s.held_pence, 0) AS "heldPence",
         c.balance_pence AS "storedBalancePence", c.held_pence AS "storedHeldPence"
       FROM organisations o
       LEFT JOIN sums s ON s.org_id = o.id
       LEFT JOIN credit_balances c ON c.org_id = o.id
       ORDER BY o.id`,
    )
    .all();
}

export interface HoldProblem {
  runId: string;
  problem: string;
}

/**
 * Hold pairing checked from the entries: every release and settle has its reserve, a release
 * returns exactly the hold, a settle never exceeds it and never appears without its release.
 */
export function findHoldProblems(db: SqlDatabase, limit: number): HoldProblem[] {
  return db.query<HoldProblem, [number]>(holdProblemsSql("?")).all(limit);
}

/**
 * findHoldProblems' query, in SQL both engines run (verify-postgres.ts passes "$1"), so the
 * rules are written once. `limitParameter`: the engine's placeholder for the row limit.
 */
export function holdProblemsSql(limitParameter: string): string {
  return `WITH runs AS (
      SELECT ref AS run_id,
        SUM(CASE WHEN type = 'reserve' THEN 1 ELSE 0 END) AS reserves,
        SUM(CASE WHEN type = 'release' THEN 1 ELSE 0 END) AS releases,
        SUM(CASE WHEN type = 'settle' THEN 1 ELSE 0 END) AS settles,
        -SUM(CASE WHEN type = 'reserve' THEN amount_pence ELSE 0 END) AS held,
        SUM(CASE WHEN type = 'release' THEN amount_pence ELSE 0 END) AS released,
        -SUM(CASE WHEN type = 'settle' THEN amount_pence ELSE 0 END) AS settled,
        COUNT(DISTINCT org_id) AS orgs
      FROM ledger_entries
      WHERE purpose IN ('run_hold', 'run_release', 'run_settle')
      GROUP BY ref),
    judged AS (
      SELECT run_id, CASE
          WHEN reserves <> 1 THEN 'release or settle without exactly one reserve'
          WHEN releases > 1 OR settles > 1 THEN 'hold resolved more than once'
          WHEN releases = 1 AND released <> held THEN 'release differs from the hold'
          WHEN settles = 1 AND releases = 0 THEN 'settle without release'
          WHEN settled > held THEN 'settle exceeds the hold'
          WHEN orgs <> 1 THEN 'hold entries span organisations'
        END AS problem
      FROM runs)
    SELECT run_id AS "runId", problem FROM judged WHERE problem IS NOT NULL ORDER BY run_id LIMIT ${limitParameter}`;
}

export function countEntries(db: SqlDatabase): number {
  return db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM ledger_entries").get()!.n;
}

// ——— top-up orders and Stripe events ———

export type TopUpOrderStatus = "creating" | "pending" | "paid" | "failed" | "expired";

export interface TopUpOrder {
  id: string;
  orgId: string;
  amountPence: number;
  currency: "GBP";
  status: TopUpOrderStatus;
  checkoutSessionId: string | null;
  checkoutUrl: string | null;
  createdAtMs: number;
  updatedAtMs: number;
}

const ORDER_COLUMNS = `id, org_id AS "orgId", amount_pence AS "amountPence", currency, status,
  checkout_session_id AS "checkoutSessionId", checkout_url AS "checkoutUrl", created_at_ms AS "createdAtMs", updated_at_ms AS "updatedAtMs"`;

export function insertOrder(db: SqlDatabase, o: TopUpOrder): void {
  db.query(
    `INSERT INTO top_up_orders (id, org_id, amount_pence, currency, status, checkout_session_id, checkout_url, created_at_ms, updated_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(o.id, o.orgId, o.amountPence, o.currency, o.status, o.checkoutSessionId, o.checkoutUrl, o.createdAtMs, o.updatedAtMs);
}

/** `lock`: forUpdate(db) to lock the order until the transaction ends, or nothing. */
export function findOrder(db: SqlDatabase, id: string, lock = ""): TopUpOrder | null {
  return db.query<TopUpOrder, [string]>(`SELECT ${ORDER_COLUMNS} FROM top_up_orders WHERE id = ?${lock}`).get(id);
}

export function findOrderBySession(db: SqlDatabase, sessionId: string, lock = ""): TopUpOrder | null {
  return db.query<TopUpOrder, [string]>(`SELECT ${ORDER_COLUMNS} FROM top_up_orders WHERE checkout_session_id = ?${lock}`).get(sessionId);
}

export function setOrderCheckout(db: SqlDatabase, id: string, sessionId: string, url: string, nowMs: number): void {
  db.query(
    `UPDATE top_up_orders SET status = 'pending', checkout_session_id = ?, checkout_url = ?, updated_at_ms = ?
     WHERE id = ? AND status IN ('creating', 'failed')`,
  ).run(sessionId, url, nowMs, id);
}

/** Moves an order on; a paid order never moves again. */
export function setOrderStatus(db: SqlDatabase, id: string, status: TopUpOrderStatus, nowMs: number): void {
  db.query("UPDATE top_up_orders SET status = ?, updated_at_ms = ? WHERE id = ? AND status <> 'paid'").run(status, nowMs, id);
}

/** Records a webhook event id; false when it was already recorded (a redelivery). */
export function recordStripeEvent(
  db: SqlDatabase,
  e: { id: string; type: string; orderId: string | null; outcome: string; receivedAtMs: number },
): boolean {
  return (
    db
      .query("INSERT INTO stripe_events (id, type, order_id, outcome, received_at_ms) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING")
      .run(e.id, e.type, e.orderId, e.outcome, e.receivedAtMs).changes === 1
  );
}

export function findStripeEventOutcome(db: SqlDatabase, id: string): string | null {
  return db.query<{ outcome: string }, [string]>("SELECT outcome FROM stripe_events WHERE id = ?").get(id)?.outcome ?? null;
}

/** Forgets event ids older than `beforeMs` (Stripe stops redelivering after three days). */
export function purgeStripeEvents(db: SqlDatabase, beforeMs: number, batchMax: number): number {
  return db
    .query("DELETE FROM stripe_events WHERE id IN (SELECT id FROM stripe_events WHERE received_at_ms < ? ORDER BY received_at_ms LIMIT ?)")
    .run(beforeMs, batchMax).changes;
}
