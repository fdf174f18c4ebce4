// `regkb credits verify` on PostgreSQL: store.ts's recomputeTotals and findHoldProblems in
// PostgreSQL's dialect, judged by the same verificationOf as on SQLite, so both engines
// report the same problems in the same words.
import type { SQL } from "bun";
import { verificationOf, VERIFY_PROBLEMS_MAX, type LedgerVerification } from "./ledger";
import type { HoldProblem, RecomputedTotals } from "./store";

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
  return tx`WITH runs AS (
      SELECT ref AS run_id,
        count(*) FILTER (WHERE type = 'reserve') AS reserves,
        count(*) FILTER (WHERE type = 'release') AS releases,
        count(*) FILTER (WHERE type = 'settle') AS settles,
        coalesce(-sum(amount_pence) FILTER (WHERE type = 'reserve'), 0) AS held,
        coalesce(sum(amount_pence) FILTER (WHERE type = 'release'), 0) AS released,
        coalesce(-sum(amount_pence) FILTER (WHERE type = 'settle'), 0) AS settled,
        count(DISTINCT org_id) AS orgs
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
    SELECT run_id AS "runId", problem FROM judged WHERE problem IS NOT NULL ORDER BY run_id LIMIT ${limit}`;
}

/** Recomputes every organisation's totals and hold pairing from the entries, in one snapshot (REPEATABLE READ). */
export async function verifyLedgerPostgres(sql: SQL): Promise<LedgerVerification> {
  return sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", (tx) => verifyLedgerIn(tx));
}

/** The same, inside a transaction the caller holds (migrate-to-postgres checks its copy before committing). */
export async function verifyLedgerIn(tx: SQL): Promise<LedgerVerification> {
  const totals = await recomputeTotals(tx);
  const holdProblems = await findHoldProblems(tx, VERIFY_PROBLEMS_MAX);
  const [{ entries }] = await tx`SELECT count(*)::float8 AS entries FROM ledger_entries`;
  return verificationOf(totals, holdProblems, entries);
}
