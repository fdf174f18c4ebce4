// What `regkb migrate-to-postgres` copies from a single node's SQLite database, in the order
// PostgreSQL's foreign keys need, and the batched copy of one table. Columns come from the
// PostgreSQL table (the schemas are numbered side by side, so SQLite has each of them).
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

export interface TablePlan {
  table: string;
  /** SQLite ORDER BY: insertion order (rowid) where there is one, else the primary key. */
  orderBy: string;
  /** SQLite WHERE, when only some rows belong in PostgreSQL. */
  where?: string;
}

/**
 * Parents first. Not copied: credit_balances (PostgreSQL's triggers open and recompute it,
 * and the copy is checked against SQLite's), schema_migrations (the target's own),
 * passage_changes (written by the passages' trigger), document_files (read from the
 * documents/ folder, see copy-installation.ts), and the search index's own tables, which
 * each node derives from the passages.
 */
export const COPIED_TABLES: TablePlan[] = [
  { table: "jurisdictions", orderBy: "rowid" },
  { table: "organisations", orderBy: "rowid" },
  { table: "organisation_jurisdictions", orderBy: "org_id, slug" },
  { table: "api_keys", orderBy: "rowid" },
  { table: "users", orderBy: "rowid" },
  { table: "dashboard_sessions", orderBy: "token_hash" },
  { table: "login_attempts", orderBy: "id" },
  { table: "top_up_orders", orderBy: "rowid" },
  { table: "stripe_events", orderBy: "rowid" },
  { table: "idempotency_keys", orderBy: "org_id, key" },
  { table: "runs", orderBy: "rowid" },
  { table: "run_turns", orderBy: "kind, org_id" },
  // In the order they were written, so each entry's balance CHECK sees what it saw in SQLite.
  { table: "ledger_entries", orderBy: "rowid" },
  { table: "documents", orderBy: "rowid" },
  // In id order: the passages' trigger logs one insert each, in this order.
  { table: "search_chunks", orderBy: "id" },
  { table: "search_chunk_vectors", orderBy: "chunk_id" },
  // Which embedder made the vectors; the rest of SQLite's keys describe its own index.
  { table: "search_index_meta", orderBy: "key", where: "key IN ('embedder_id', 'dimensions')" },
];

/** Bind parameters per INSERT at most (PostgreSQL allows 65,535). */
const PARAMETERS_PER_INSERT_MAX = 10_000;
/** Rows per INSERT at most, so a batch of 20,000-character passages stays a few MB. */
export const BATCH_ROWS_MAX = 500;

export async function postgresColumns(tx: SQL, table: string): Promise<string[]> {
  const rows: { name: string }[] = await tx`SELECT column_name AS name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`;
  if (rows.length === 0) throw new Error(`the PostgreSQL schema has no table ${table}`);
  return rows.map((r) => r.name);
}

/** Copies one table in batches (never the whole table in memory); returns the rows copied. */
export async function copyTable(source: Database, tx: SQL, plan: TablePlan, batchRowsMax = BATCH_ROWS_MAX): Promise<number> {
  const columns = await postgresColumns(tx, plan.table);
  const batchRows = Math.max(1, Math.min(batchRowsMax, Math.floor(PARAMETERS_PER_INSERT_MAX / columns.length)));
  const select = source.query<Record<string, unknown>, []>(
    `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${plan.table}"${plan.where ? ` WHERE ${plan.where}` : ""} ORDER BY ${plan.orderBy}`,
  );
  let copied = 0;
  let batch: Record<string, unknown>[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await tx`INSERT INTO ${tx(plan.table)} ${tx(batch, ...columns)}`;
    copied += batch.length;
    batch = [];
  };
  try {
    for (const row of select.iterate()) {
      batch.push(row);
      if (batch.length >= batchRows) await flush();
    }
    await flush();
  } finally {
    select.finalize();
  }
  return copied;
}
