import { Database } from "bun:sqlite";
import { mkdirSync, readdirSync, statSync } from "node:fs";
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

export type SynchronousMode = "full" | "normal";

/** What an earlier start leaves beside the database; only uploads and the cache count, not unrelated files. */
const EARLIER_INSTALL_DIRS = ["documents", "cache"] as const;

export class LostDatabaseError extends Error {
  override readonly name = "LostDatabaseError";
}

function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function hasEntries(dir: string): boolean {
  try {
    return readdirSync(dir).length > 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR") return false;
    throw error;
  }
}

/**
 * A missing or zero-length database is a new install only in a data directory without an
 * earlier install's files. Beside uploaded documents or the cache it means the database
 * was lost (a truncated copy, a failed restore, a volume not mounted): starting empty would
 * answer every key 401 and forget every balance, silently. `--init` says it is meant.
 */
function refuseLostDatabase(dataDir: string, file: string): void {
  const size = sizeOf(file);
  if (size !== undefined && size > 0) return;
  const leftovers = EARLIER_INSTALL_DIRS.filter((name) => hasEntries(join(dataDir, name)));
  if (leftovers.length === 0) return;
  throw new LostDatabaseError(
    `${file} is ${size === undefined ? "missing" : "empty"} but ${dataDir} holds ${leftovers.map((d) => `${d}/`).join(" and ")} ` +
      "from an earlier start; restore the database from a backup (see the README), or start a new, empty database " +
      "deliberately with `regkb serve --init`",
  );
}

/**
 * Opens (creating if needed) the one database file: WAL so readers never block the
 * writer, a busy timeout so concurrent writers (CLI + server) queue instead of failing,
 * foreign keys on, sqlite-vec loaded, migrations applied. A missing or empty file beside
 * an earlier install's files is refused unless `init` (regkb serve --init).
 */
export async function openDatabase(dataDir: string, synchronous: SynchronousMode = "full", options: { init?: boolean } = {}): Promise<Database> {
  return (await openDatabaseMigrated(dataDir, synchronous, options)).db;
}

/** openDatabase, also saying which migration versions this opening applied (`regkb migrate`). */
export async function openDatabaseMigrated(
  dataDir: string,
  synchronous: SynchronousMode = "full",
  options: { init?: boolean } = {},
): Promise<{ db: Database; applied: number[] }> {
  const file = databasePath(dataDir);
  if (!options.init) refuseLostDatabase(dataDir, file);
  mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, { create: true, strict: true });
  applyPragmas(db, synchronous);
  await loadVectorExtension(db, cacheDir(dataDir));
  return { db, applied: migrate(db) };
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
