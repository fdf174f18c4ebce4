import type { Database } from "bun:sqlite";
import { migrations as bundled, type Migration } from "./migrations";

/** Applies each pending migration in its own transaction and records it. */
export function migrate(db: Database, migrations: Migration[] = bundled, nowMs = Date.now()): number[] {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at_ms INTEGER NOT NULL)`);
  const applied = new Set(
    db.query<{ version: number }, []>("SELECT version FROM schema_migrations").all().map((r) => r.version),
  );
  const newest = Math.max(0, ...applied);
  const known = Math.max(0, ...migrations.map((m) => m.version));
  if (newest > known) {
    throw new Error(`database schema version ${newest} is newer than this binary knows (${known}); upgrade regkb`);
  }
  const ran: number[] = [];
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (applied.has(m.version)) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.query("INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)").run(m.version, m.name, nowMs);
    }).immediate();
    ran.push(m.version);
  }
  return ran;
}
