import type { SqlDatabase } from "./sql-database";

/**
 * `fn` inside BEGIN IMMEDIATE (a SAVEPOINT when a transaction is already open). bun:sqlite's
 * db.transaction() prepares its BEGIN/COMMIT statements on every call (~50 µs), so one
 * runner is built per database and the work is passed in as an argument.
 */
const runners = new WeakMap<SqlDatabase, ReturnType<typeof buildRunner>>();

function buildRunner(db: SqlDatabase) {
  return db.transaction((fn: () => unknown) => fn());
}

export function immediate<T>(db: SqlDatabase, fn: () => T): T {
  let runner = runners.get(db);
  if (!runner) runners.set(db, (runner = buildRunner(db)));
  return runner.immediate(fn) as T;
}
