import { mkdirSync, renameSync, rmSync } from "node:fs";
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
