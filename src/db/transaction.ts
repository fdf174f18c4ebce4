import type { Database } from "bun:sqlite";

/**
 * `fn` inside BEGIN IMMEDIATE (a SAVEPOINT when a transaction is already open). bun:sqlite's
 * db.transaction() prepares its BEGIN/COMMIT statements on every call (~50 µs), so one
 * runner is built per database and the work is passed in as an argument.
 */
const runners = new WeakMap<Database, ReturnType<typeof buildRunner>>();

function buildRunner(db: Database) {
  return db.transaction((fn: () => unknown) => fn());
}

export function immediate<T>(db: Database, fn: () => T): T {
  let runner = runners.get(db);
  if (!runner) runners.set(db, (runner = buildRunner(db)));
  return runner.immediate(fn) as T;
}
