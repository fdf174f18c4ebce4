import type { SQL } from "bun";
import type { Migration } from "../migrations";
import { postgresMigrations } from "./migrations";

/** pg_advisory_xact_lock key held while a migration is checked and applied ("regkb" in ASCII). */
export const MIGRATION_LOCK_KEY = 0x7265676b62;

/**
 * Applies each pending migration in its own transaction and records it, like src/db/migrate.ts.
 * Each transaction first takes the advisory lock, then reads what is applied, so processes
 * migrating one database at once take turns and every version is applied exactly once.
 */
export async function migratePostgres(sql: SQL, migrations: Migration[] = postgresMigrations, nowMs = Date.now()): Promise<number[]> {
  const known = Math.max(0, ...migrations.map((m) => m.version));
  const ran: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    const applied = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      await tx.unsafe(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)`);
      const versions = (await tx`SELECT version FROM schema_migrations`).map((r: { version: number }) => r.version);
      const newest = Math.max(0, ...versions);
      if (newest > known) {
        throw new Error(`database schema version ${newest} is newer than this binary knows (${known}); upgrade regkb`);
      }
      if (versions.includes(m.version)) return false;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (${m.version}, ${m.name}, ${nowMs})`;
      return true;
    });
    if (applied) ran.push(m.version);
  }
  return ran;
}
