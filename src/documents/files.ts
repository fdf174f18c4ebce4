import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/** <dataDir>/documents/<orgId>/<documentId>.pdf — one folder per organisation. */
export function documentPath(dataDir: string, orgId: string, documentId: string): string {
  return join(dataDir, "documents", orgId, `${documentId}.pdf`);
}

/** Writes to a temporary name then renames, so a file under its final name is always complete. */
export async function storeDocumentFile(path: string, bytes: Uint8Array): Promise<void> {
  mkdirSync(join(path, ".."), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    await Bun.write(partial, bytes);
    renameSync(partial, path);
  } catch (error) {
    rmSync(partial, { force: true });
    throw error;
  }
}

export function removeDocumentFile(path: string): void {
  rmSync(path, { force: true });
}

const PARTIAL_NAME = /^[^/]+\.pdf\.(\d+)\.partial$/;

/**
 * Removes uploads a crash left half-written (`documents/<org>/<id>.pdf.<pid>.partial`);
 * run at start, before the first upload. A file whose writer is still alive (another
 * process on the same data directory) is left alone. Returns how many were removed.
 */
export function removeStalePartialFiles(dataDir: string): number {
  const root = join(dataDir, "documents");
  if (!existsSync(root)) return 0;
  let removed = 0;
  for (const org of readdirSync(root, { withFileTypes: true })) {
    if (!org.isDirectory()) continue;
    for (const name of readdirSync(join(root, org.name))) {
      const writerPid = PARTIAL_NAME.exec(name)?.[1];
      if (writerPid === undefined || isOtherLiveProcess(Number(writerPid))) continue;
      rmSync(join(root, org.name, name), { force: true });
      removed++;
    }
  }
  return removed;
}

function isOtherLiveProcess(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
