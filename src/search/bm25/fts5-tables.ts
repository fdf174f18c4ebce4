/**
 * Reads what FTS5's bm25() reads, from FTS5's own tables, so the term index (term-index.ts)
 * scores with exactly FTS5's numbers: the row count and token totals (the averages record),
 * each row's token count (docsize), each term's occurrences per row and column (an
 * fts5vocab 'instance' table over search_fts), and the tokenizer the table was declared with.
 */
import { Database } from "bun:sqlite";

/** The fts5vocab table over search_fts; in the temp schema, so it writes nothing to the database file. */
const INSTANCES = "temp.search_fts_instances";
/** FTS5 keeps the row count and per-column token totals in this row of its data table. */
const AVERAGES_ROWID = 1;
/** The BM25 index's columns, in declaration order (migration 003). */
export const FTS_COLUMNS = ["citation", "heading", "body", "scopes"] as const;

export interface Fts5Totals {
  /** Rows in the index (bm25's N). */
  rows: number;
  /** Tokens in every column of every row (bm25's avgdl = tokens / rows). */
  tokens: number;
}

/** SQLite's varint (the format FTS5 writes its records in): value and the offset after it. */
function readVarint(bytes: Uint8Array, at: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const byte = bytes[at + i]!;
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) return [value, at + i + 1];
  }
  return [value * 256 + bytes[at + 8]!, at + 9];
}

/** The sum of a record of varints (a docsize row's column sizes; the averages record's totals after its first). */
function sumOfVarints(bytes: Uint8Array, from: number): number {
  let sum = 0;
  for (let at = from; at < bytes.length; ) {
    const [v, next] = readVarint(bytes, at);
    sum += v;
    at = next;
  }
  return sum;
}

export function readTotals(db: Database): Fts5Totals {
  const row = db.query<{ block: Uint8Array }, [number]>("SELECT block FROM search_fts_data WHERE id = ?").get(AVERAGES_ROWID);
  if (row === null) return { rows: 0, tokens: 0 };
  const [rows, after] = readVarint(row.block, 0);
  return { rows, tokens: sumOfVarints(row.block, after) };
}

/** Each row's token count over all columns (bm25's D), for rows with ids in (afterId, …], at most `limit`. */
export function readRowLengths(db: Database, afterId: number, limit: number): { id: number; tokens: number }[] {
  return db
    .query<{ id: number; sz: Uint8Array }, [number, number]>("SELECT id, sz FROM search_fts_docsize WHERE id > ? ORDER BY id LIMIT ?")
    .all(afterId, limit)
    .map((r) => ({ id: r.id, tokens: sumOfVarints(r.sz, 0) }));
}

/**
 * The `tokenize` argument search_fts was created with, or undefined if its declaration is
 * not the one this reader knows (then nothing here is used and FTS5 answers every search).
 */
export function declaredTokenizer(db: Database): string | undefined {
  const sql = db.query<{ sql: string }, []>("SELECT sql FROM sqlite_schema WHERE name = 'search_fts'").get()?.sql ?? "";
  const columns = /fts5\(\s*citation,\s*heading,\s*body,\s*scopes,/.test(sql);
  return columns ? /tokenize\s*=\s*'([^']*)'/.exec(sql)?.[1] : undefined;
}

/**
 * Creates the fts5vocab table over search_fts in the temp schema. A search worker's
 * connection is query-only, which refuses temp tables too: it is lifted for this one
 * statement, which cannot write the database file.
 */
export function openInstances(db: Database): void {
  const queryOnly = db.query<{ query_only: number }, []>("PRAGMA query_only").get()?.query_only === 1;
  if (queryOnly) db.exec("PRAGMA query_only = OFF");
  try {
    db.exec(`CREATE VIRTUAL TABLE IF NOT EXISTS ${INSTANCES} USING fts5vocab(main, search_fts, 'instance')`);
  } finally {
    if (queryOnly) db.exec("PRAGMA query_only = ON");
  }
}

/** Offsets within a column are below this (a column holds < 2^20 tokens: passages' fields are bounded far below). */
export const OFFSETS = 1 << 20;

/**
 * Occurrences of one indexed term, by row, column and offset (openInstances first): one
 * number each, (row id × 4 + column index) × OFFSETS + offset, as cheap to hand over as any.
 */
export function readTermInstances(db: Database, term: string): number[] {
  const column = `CASE col ${FTS_COLUMNS.map((c, i) => `WHEN '${c}' THEN ${i}`).join(" ")} END`;
  return db
    .query<{ v: number }, [string]>(`SELECT (doc * 4 + ${column}) * ${OFFSETS} + offset AS v FROM ${INSTANCES} WHERE term = ?`)
    .values(term)
    .map((r) => r[0] as number);
}

/**
 * FTS5's tokenizer, run on text exactly as search_fts runs it on a query phrase: an FTS5
 * table in a private in-memory database, declared with the same `tokenize` argument.
 */
export class Fts5Tokenizer {
  readonly #db = new Database(":memory:");

  constructor(tokenize: string) {
    this.#db.exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = '${tokenize.replace(/'/g, "''")}')`);
    this.#db.exec("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')");
  }

  tokens(text: string): string[] {
    this.#db.query("INSERT INTO t (rowid, x) VALUES (1, ?)").run(text);
    const terms = this.#db.query<{ term: string }, []>("SELECT term FROM v ORDER BY offset").all().map((r) => r.term);
    this.#db.exec("DELETE FROM t");
    return terms;
  }

  close(): void {
    this.#db.close();
  }
}
