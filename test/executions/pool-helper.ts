import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "../../src/log";
import { SandboxPool } from "../../src/executions/sandbox/pool";

/**
 * Pyodide's files and memory snapshot are the same for every test file, so they share one
 * cache directory (materialise and the snapshot write are both atomic renames).
 */
export const TEST_SANDBOX_CACHE_DIR = join(tmpdir(), "regkb-test-sandbox-cache");

/** The default REGKB_EXECUTION_MEMORY_MB, in bytes. */
export const EXECUTION_MEMORY_BYTES_DEFAULT = 512 * 1024 * 1024;

/** A started pool of real, locked children. */
export async function createTestPool(size = 2, memoryBytes = EXECUTION_MEMORY_BYTES_DEFAULT): Promise<SandboxPool> {
  const pool = await SandboxPool.create({ size, cacheDir: TEST_SANDBOX_CACHE_DIR, unsafeNoIsolation: false, memoryBytes, log: createLogger("error") });
  pool.start();
  return pool;
}
