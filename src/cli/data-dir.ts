import { tryLockDataDir, type DataDirLock } from "../db/data-dir-lock";
import { Refusal } from "../errors";

/** The data directory's lock (src/db/data-dir-lock.ts), or data_dir_in_use when another process holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const lock = tryLockDataDir(dataDir);
  if (lock === undefined) {
    throw new Refusal("data_dir_in_use", `${dataDir} is in use by another regkb process (a running \`regkb serve\` or \`regkb migrate-to-postgres\`): stop it first`);
  }
  return lock;
}
