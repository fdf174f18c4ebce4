import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** The file whose lock marks a data directory as in use by `regkb serve` or `regkb migrate-to-postgres`. */
const DATA_DIR_LOCK_FILE = "regkb.lock";

export interface DataDirLock {
  release(): void;
}

/**
 * An exclusive SQLite transaction on <data>/regkb.lock, held until release(), or undefined
 * when another process or connection holds it. SQLite's file lock is the operating
 * system's: it goes with the process (a SIGKILLed server leaves nothing stale to clean up)
 * and every other process and connection sees it.
 */
export function tryLockDataDir(dataDir: string): DataDirLock | undefined {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, DATA_DIR_LOCK_FILE), { create: true });
  try {
    db.exec("PRAGMA busy_timeout = 0");
    db.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === "SQLITE_BUSY") return undefined;
    throw error;
  }
  return {
    release() {
      db.exec("ROLLBACK");
      db.close();
    },
  };
}
