import { SQL } from "bun";

export interface PostgresSettings {
  /** postgres:// or postgresql:// URL, password included; never logged (see redactDatabaseUrl). */
  url: string;
  /** Connections the pool opens at most. */
  poolSize: number;
  /**
   * Keep named prepared statements (Bun's default; off unless set). Only for a connection
   * that never has two statements in flight, like the synchronous handle's (sync/worker.ts).
   */
  preparedStatements?: boolean;
}

/** Seconds to wait for a connection before a query fails, so an unreachable server is an error, not a hang. */
const CONNECT_TIMEOUT_SECONDS = 10;

/** The URL with its password replaced, for logs and error messages. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(a malformed database URL)";
  }
}

/**
 * Opens a pool on the URL and nothing else. Bun lets PGDATABASE and PGSSLMODE override a
 * URL's database and TLS mode; both are passed explicitly, so the URL alone decides where
 * the data goes (sslmode from the URL, else libpq's default, prefer).
 *
 * Prepared statements are off unless asked for: with them on and several statements in
 * flight on one connection, Bun's driver has handed one query's rows to another and reused
 * the wrong cached statement (oven-sh/bun#33665, #30494). Off, PostgreSQL parses and plans
 * every statement anew (test/postgres/own-answers.test.ts checks no named statement is
 * kept), and json columns come back parsed, int arrays as plain arrays (our tables hold
 * JSON as TEXT).
 */
export function openPostgres(settings: PostgresSettings): SQL {
  const parsed = new URL(settings.url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username);
  const sslmode = parsed.searchParams.get("sslmode") ?? "prefer";
  return new SQL({
    url: settings.url,
    database,
    tls: sslmode as "disable" | "allow" | "prefer" | "require" | "verify-ca" | "verify-full",
    max: settings.poolSize,
    connectionTimeout: CONNECT_TIMEOUT_SECONDS,
    prepare: settings.preparedStatements ?? false,
  });
}
