// The check a copy of the ledger must pass before it commits: PostgreSQL's triggers, fed the
// entries in their original order, must arrive at SQLite's stored balance and hold for every
// organisation, with the same number of entries and the same sum for each type.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

export interface LedgerCopyFigures {
  organisations: number;
  entries: number;
  /** Σ of every organisation's balance and hold, both sides equal. */
  balancePence: number;
  heldPence: number;
}

export class LedgerCopyMismatch extends Error {
  override name = "LedgerCopyMismatch";
}

const PROBLEMS_SHOWN = 5;

interface Figures {
  balances: Map<string, string>;
  byType: Map<string, string>;
}

/** Keys and values as text, so both engines' integers (PostgreSQL's BIGINT arrives as a string) compare alike. */
function figuresOf(balances: { orgId: string; balance: unknown; held: unknown }[], byType: { orgId: string; type: string; n: unknown; total: unknown }[]): Figures {
  return {
    balances: new Map(balances.map((b) => [b.orgId, `balance ${String(b.balance)}p, held ${String(b.held)}p`])),
    byType: new Map(byType.map((t) => [`${t.orgId} ${t.type}`, `${String(t.n)} entries summing to ${String(t.total)}p`])),
  };
}

function sqliteFigures(source: Database): Figures {
  return figuresOf(
    source.query<{ orgId: string; balance: number; held: number }, []>(
      "SELECT org_id AS orgId, balance_pence AS balance, held_pence AS held FROM credit_balances",
    ).all(),
    source.query<{ orgId: string; type: string; n: number; total: number }, []>(
      "SELECT org_id AS orgId, type, count(*) AS n, sum(amount_pence) AS total FROM ledger_entries GROUP BY org_id, type",
    ).all(),
  );
}

async function postgresFigures(tx: SQL): Promise<Figures> {
  return figuresOf(
    await tx`SELECT org_id AS "orgId", balance_pence AS balance, held_pence AS held FROM credit_balances`,
    await tx`SELECT org_id AS "orgId", type, count(*) AS n, sum(amount_pence) AS total FROM ledger_entries GROUP BY org_id, type`,
  );
}

function differences(what: string, sqlite: Map<string, string>, postgres: Map<string, string>): string[] {
  const problems: string[] = [];
  for (const key of new Set([...sqlite.keys(), ...postgres.keys()])) {
    const [s, p] = [sqlite.get(key) ?? "none", postgres.get(key) ?? "none"];
    if (s !== p) problems.push(`organisation ${key}: ${what} in SQLite ${s}, in PostgreSQL ${p}`);
  }
  return problems;
}

/** Throws LedgerCopyMismatch naming the organisations whose figures differ; else the figures both sides share. */
export async function checkLedgerCopy(source: Database, tx: SQL): Promise<LedgerCopyFigures> {
  const [sqlite, postgres] = [sqliteFigures(source), await postgresFigures(tx)];
  const problems = [...differences("credit", sqlite.balances, postgres.balances), ...differences("entries", sqlite.byType, postgres.byType)];
  if (problems.length > 0) {
    throw new LedgerCopyMismatch(
      `the copied ledger differs from the source (${problems.length} differences): ${problems.slice(0, PROBLEMS_SHOWN).join("; ")}`,
    );
  }
  const [totals] = await tx`SELECT count(*)::float8 AS organisations,
      coalesce(sum(balance_pence), 0)::float8 AS "balancePence", coalesce(sum(held_pence), 0)::float8 AS "heldPence"
    FROM credit_balances`;
  const [{ entries }] = await tx`SELECT count(*)::float8 AS entries FROM ledger_entries`;
  return { organisations: totals.organisations, entries, balancePence: totals.balancePence, heldPence: totals.heldPence };
}
