import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { loadVectorExtension } from "./vector-extension";
import { migrate } from "./migrate";

export const DATABASE_FILE = "regkb.sqlite";

export function databasePath(dataDir: string): string {
  return join(dataDir, DATABASE_FILE);
}

/** Private folder for files materialised out of the binary (extensions, models, Pyodide). */
export function cacheDir(dataDir: string): string {
  return join(dataDir, "cache");
}

/**
 * Opens (creating if needed) the one database file: WAL so readers never block the
 * writer, a busy timeout so concurrent writers (CLI + server) queue instead of failing,
 * foreign keys on, sqlite-vec loaded, migrations applied.
 */
export type SynchronousMode = "full" | "normal";

export async function openDatabase(dataDir: string, synchronous: SynchronousMode = "full"): Promise<Database> {
  const file = databasePath(dataDir);
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { create: true, strict: true });
  applyPragmas(db, synchronous);
  await loadVectorExtension(db, cacheDir(dataDir));
  migrate(db);
  return db;
}

export function applyPragmas(db: Database, synchronous: SynchronousMode): void {
  db.exec("PRAGMA journal_mode = WAL");
  // FULL syncs the WAL at every commit, so a committed charge survives power loss too.
  // NORMAL survives process crashes but an OS crash may drop the last commits (never corrupts).
  db.exec(`PRAGMA synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 10000");
  db.exec("PRAGMA temp_store = MEMORY");
}
