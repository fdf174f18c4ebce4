import type { SQLQueryBindings } from "bun:sqlite";

/**
 * The part of bun:sqlite's Database that stores ported to both engines use. bun:sqlite's
 * Database satisfies it as it is; src/db/postgres/sync/handle.ts satisfies it on PostgreSQL
 * (synchronously, so a store's transaction stays one uninterrupted function on either engine).
 */
export type SqlBinding = SQLQueryBindings;

export interface SqlChanges {
  changes: number;
  lastInsertRowid: number | bigint;
}

export interface SqlStatement<Row = unknown, Params extends SqlBinding[] = SqlBinding[]> {
  get(...params: Params): Row | null;
  all(...params: Params): Row[];
  run(...params: Params): SqlChanges;
  values(...params: Params): SqlBinding[][];
}

export interface SqlTransaction<Args extends unknown[], Result> {
  (...args: Args): Result;
  deferred(...args: Args): Result;
  immediate(...args: Args): Result;
  exclusive(...args: Args): Result;
}

export interface SqlDatabase {
  // bun:sqlite's own signature, spelled the same (`any[]` included) so its Database is assignable.
  query<Row = unknown, Params extends SqlBinding | SqlBinding[] = SqlBinding[]>(
    sql: string,
  ): SqlStatement<Row, Params extends any[] ? Params : [Params]>;
  exec(sql: string): unknown;
  transaction<Args extends unknown[], Result>(fn: (...args: Args) => Result): SqlTransaction<Args, Result>;
  readonly inTransaction: boolean;
  close(): void;
}

/** Marks the PostgreSQL handle, so the few statements whose text differs between engines can tell. */
export const POSTGRES_DIALECT = Symbol.for("regkb.postgres-dialect");

export function isPostgres(db: SqlDatabase): boolean {
  return (db as { [POSTGRES_DIALECT]?: boolean })[POSTGRES_DIALECT] === true;
}

/**
 * ` FOR UPDATE` on PostgreSQL, nothing on SQLite: BEGIN IMMEDIATE already holds SQLite's one
 * write lock, while PostgreSQL at READ COMMITTED must lock the rows a decision is made on.
 */
export function forUpdate(db: SqlDatabase): string {
  return isPostgres(db) ? " FOR UPDATE" : "";
}

/**
 * `column` sorted in byte order on both engines: a PostgreSQL database's collation may sort
 * text otherwise (en_US ignores '-' at first), so lists would come back in another order.
 */
export function byteOrder(db: SqlDatabase, column: string): string {
  return isPostgres(db) ? `${column} COLLATE "C"` : column;
}

/** SQLite's unique or primary-key violation, or PostgreSQL's (SQLSTATE 23505) through the handle. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
}

/** PostgreSQL's deadlock and serialisation failures (SQLSTATE 40P01, 40001): the whole transaction may run again. */
export function isRetryableConflict(error: unknown): boolean {
  const sqlState = (error as { sqlState?: unknown } | null)?.sqlState;
  return sqlState === "40001" || sqlState === "40P01";
}
