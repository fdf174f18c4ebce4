// The ledger's checks inside an async PostgreSQL transaction: store.ts's recomputeTotals in PostgreSQL's dialect
// and its hold-problem query as it is, judged by the same verificationOf as on SQLite, so
// both engines report the same problems in the same words.
import type { SQL } from "bun";
import { verificationOf, VERIFY_PROBLEMS_MAX, type LedgerVerification } from "./ledger";
import { holdProblemsSql, type HoldProblem, type RecomputedTotals } from "./store";

// Sums and counts arrive as float8: exact for pence (|Σ| stays far below 2^53), and numbers, not strings.
async function recomputeTotals(tx: SQL): Promise<RecomputedTotals[]> {
  return tx`WITH sums AS (
      SELECT org_id,
        coalesce(sum(CASE WHEN type IN ('reserve', 'release') THEN 0 ELSE amount_pence END), 0) AS balance_pence,
        coalesce(-sum(CASE WHEN type IN ('reserve', 'release') THEN amount_pence ELSE 0 END), 0) AS held_pence
      FROM ledger_entries GROUP BY org_id)
    SELECT o.id AS "orgId", coalesce(s.balance_pence, 0)::float8 AS "balancePence", coalesce(s.held_pence, 0)::float8 AS "heldPence",
      c.balance_pence::float8 AS "storedBalancePence", c.held_pence::float8 AS "storedHeldPence"
    FROM organisations o
    LEFT JOIN sums s ON s.org_id = o.id
    LEFT JOIN credit_balances c ON c.org_id = o.id
    ORDER BY o.id`;
}

async function findHoldProblems(tx: SQL, limit: number): Promise<HoldProblem[]> {
  return tx.unsafe(holdProblemsSql("$1"), [limit]);
}

/**
 * Recomputes every organisation's totals and hold pairing from the entries inside a
 * transaction the caller holds (migrate-to-postgres checks its copy before committing).
 * `regkb credits verify` runs ledger.ts's verifyLedger itself, through the synchronous handle.
 */
export async function verifyLedgerIn(tx: SQL): Promise<LedgerVerification> {
  const totals = await recomputeTotals(tx);
  const holdProblems = await findHoldProblems(tx, VERIFY_PROBLEMS_MAX);
  const [{ entries }] = await tx`SELECT count(*)::float8 AS entries FROM ledger_entries`;
  return verificationOf(totals, holdProblems, entries);
}
