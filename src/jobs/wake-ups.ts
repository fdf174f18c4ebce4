import { isPostgres, type SqlDatabase } from "../db/sql-database";

/**
 * PostgreSQL's channel announcing new runs to every node's RunEngine; the payload is the
 * run's kind. Delivery is best effort (a notification sent while a listener reconnects is
 * lost), so engines also poll.
 */
export const RUNS_CHANNEL = "regkb_runs";

/** On PostgreSQL, announces a new run of `kind`: delivered when the creating transaction commits, never if it rolls back. */
export function announceRun(db: SqlDatabase, kind: string): void {
  if (isPostgres(db)) db.query("SELECT pg_notify(?, ?)").run(RUNS_CHANNEL, kind);
}
