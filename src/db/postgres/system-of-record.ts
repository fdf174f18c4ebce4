import { redactDatabaseUrl } from "./connect";
import { postgresMigrations } from "./migrations";
import { openPostgresHandle, type PostgresHandle } from "./sync/handle";

/** Thrown when PostgreSQL is not at this binary's schema: serving it would fail mid-request. */
export class PostgresSchemaMismatch extends Error {
  override name = "PostgresSchemaMismatch";
}

/**
 * The system of record for a serving node: the synchronous handle, once PostgreSQL answers
 * and holds exactly the migrations this binary knows. A node never migrates on start: with
 * several nodes, schema changes are an operator's step (`regkb migrate`), not a race.
 */
export function openPostgresSystemOfRecord(url: string, statementTimeoutMs: number): PostgresHandle {
  const where = redactDatabaseUrl(url);
  const handle = openPostgresHandle({ url, statementTimeoutMs });
  try {
    const applied = appliedVersions(handle, where);
    const missing = postgresMigrations.filter((m) => !applied.has(m.version)).map((m) => m.version);
    const known = new Set(postgresMigrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      throw new PostgresSchemaMismatch(`PostgreSQL at ${where} has schema version ${Math.max(...unknown)}, newer than this binary knows: upgrade regkb on every node`);
    }
    if (missing.length > 0) {
      throw new PostgresSchemaMismatch(
        `PostgreSQL at ${where} lacks migration${missing.length > 1 ? "s" : ""} ${missing.join(", ")}: run \`regkb migrate --database-url URL\` once, then start the nodes`,
      );
    }
    return handle;
  } catch (error) {
    handle.close();
    throw error;
  }
}

function appliedVersions(handle: PostgresHandle, where: string): Set<number> {
  try {
    const table = handle.query<{ name: string | null }, []>("SELECT to_regclass('schema_migrations')::text AS name").get();
    if (table?.name == null) return new Set();
    return new Set(handle.query<{ version: number }, []>("SELECT version FROM schema_migrations").all().map((r) => r.version));
  } catch (error) {
    throw new Error(`PostgreSQL at ${where}: ${(error as Error).message.split("\n")[0]}`);
  }
}
