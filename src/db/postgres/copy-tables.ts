// What `regkb migrate-to-postgres` copies from a single node's SQLite database, in the order
// PostgreSQL's foreign keys need, and the batched copy of one table either way (`regkb
// backup --database-url` copies back). Columns come from the PostgreSQL table (the schemas
// are numbered side by side, so SQLite has each of them).
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";

export interface TablePlan {
  table: string;
  /** SQLite ORDER BY: insertion order (rowid) where there is one, else the primary key. */
  orderBy: string;
  /** SQLite WHERE, when only some rows belong in PostgreSQL. */
  where?: string;
  /** PostgreSQL ORDER BY for the copy back: insertion order where it matters, else the primary key. */
  postgresOrderBy: string;
  /** PostgreSQL's own columns, which SQLite keeps another way (ledger_entries.seq: SQLite's rowid). */
  postgresOnly?: string[];
}

/**
 * Parents first. Not copied: credit_balances (PostgreSQL's triggers open and recompute it,
 * and the copy is checked against SQLite's), schema_migrations (the target's own),
 * passage_changes (written by the passages' trigger), document_files (read from the
 * documents/ folder, see copy-installation.ts), and the search index's own tables, which
 * each node derives from the passages.
 */
export const COPIED_TABLES: TablePlan[] = [
  { table: "jurisdictions", orderBy: "rowid", postgresOrderBy: "slug" },
  { table: "organisations", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "organisation_jurisdictions", orderBy: "org_id, slug", postgresOrderBy: "org_id, slug" },
  { table: "api_keys", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "users", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "dashboard_sessions", orderBy: "token_hash", postgresOrderBy: "token_hash" },
  { table: "login_attempts", orderBy: "id", postgresOrderBy: "id" },
  { table: "top_up_orders", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "stripe_events", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "idempotency_keys", orderBy: "org_id, key", postgresOrderBy: "org_id, key" },
  { table: "runs", orderBy: "rowid", postgresOrderBy: "id" },
  { table: "run_turns", orderBy: "kind, org_id", postgresOrderBy: "kind, org_id" },
  // In the order they were written, so each entry's balance CHECK sees what it saw in the
  // source (PostgreSQL numbers an organisation's entries in commit order: migration 014).
  { table: "ledger_entries", orderBy: "rowid", postgresOrderBy: "seq", postgresOnly: ["seq"] },
  { table: "documents", orderBy: "rowid", postgresOrderBy: "id" },
  // In id order: the passages' trigger logs one insert each, in this order.
  { table: "search_chunks", orderBy: "id", postgresOrderBy: "id" },
  { table: "search_chunk_vectors", orderBy: "chunk_id", postgresOrderBy: "chunk_id" },
  // Which embedder made the vectors; the rest of SQLite's keys describe its own index.
  { table: "search_index_meta", orderBy: "key", where: "key IN ('embedder_id', 'dimensions')", postgresOrderBy: "key" },
];

/** Bind parameters per INSERT at most (PostgreSQL allows 65,535). */
const PARAMETERS_PER_INSERT_MAX = 10_000;
/** Rows per INSERT at most, so a batch of 20,000-character passages stays a few MB. */
export const BATCH_ROWS_MAX = 500;

/** Copies one table in batches (never the whole table in memory); returns the rows copied. */
export async function copyTable(source: Database, tx: SQL, plan: TablePlan, batchRowsMax = BATCH_ROWS_MAX): Promise<number> {
  const columns = (await copiedColumns(tx, plan)).map((c) => c.name);
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

/** A PostgreSQL value as SQLite stores it: BIGINT arrives as text (pence and times stay far below 2^53), booleans as 0/1. */
function sqliteValue(value: unknown, dataType: string): unknown {
  if (value === null || value === undefined) return null;
  if (dataType === "bigint" || dataType === "numeric") {
    const n = Number(value);
    if (!Number.isSafeInteger(n)) throw new Error(`${String(value)} does not fit SQLite's exact integers`);
    return n;
  }
  if (dataType === "boolean") return value ? 1 : 0;
  return value;
}

/** The columns both engines hold, from the PostgreSQL table (SQLite has each of them). */
async function copiedColumns(tx: SQL, plan: TablePlan): Promise<{ name: string; dataType: string }[]> {
  const rows: { name: string; dataType: string }[] = await tx`SELECT column_name AS name, data_type AS "dataType" FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${plan.table} ORDER BY ordinal_position`;
  if (rows.length === 0) throw new Error(`the PostgreSQL schema has no table ${plan.table}`);
  return rows.filter((c) => !plan.postgresOnly?.includes(c.name));
}

/**
 * The copy back: one table read through a cursor of the caller's transaction (its
 * snapshot), `batchRowsMax` rows at a time, each batch written in one SQLite transaction.
 * Returns the rows copied.
 */
export async function copyTableToSqlite(tx: SQL, target: Database, plan: TablePlan, batchRowsMax = BATCH_ROWS_MAX): Promise<number> {
  const columns = await copiedColumns(tx, plan);
  const names = columns.map((c) => `"${c.name}"`).join(", ");
  const cursor = `regkb_copy_${plan.table}`;
  const insert = target.query(`INSERT INTO "${plan.table}" (${names}) VALUES (${columns.map(() => "?").join(", ")})`);
  const write = target.transaction((rows: Record<string, unknown>[]) => {
    for (const row of rows) insert.run(...(columns.map((c) => sqliteValue(row[c.name], c.dataType)) as [string]));
  });
  await tx.unsafe(`DECLARE ${cursor} NO SCROLL CURSOR FOR SELECT ${names} FROM "${plan.table}" ORDER BY ${plan.postgresOrderBy}`);
  let copied = 0;
  try {
    for (;;) {
      const rows: Record<string, unknown>[] = await tx.unsafe(`FETCH FORWARD ${Math.max(1, batchRowsMax)} FROM ${cursor}`);
      if (rows.length === 0) break;
      write.immediate(rows);
      copied += rows.length;
    }
  } finally {
    insert.finalize();
  }
  // Only on success: after a failure the transaction is aborted and is rolled back whole.
  await tx.unsafe(`CLOSE ${cursor}`);
  return copied;
}
