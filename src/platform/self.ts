import { join } from "node:path";
import { isCompiled } from "./assets";

/**
 * The argv prefix that re-executes this program: the binary itself when compiled,
 * `bun src/main.ts` when running from source (tests, development).
 */
export function selfArgv(): string[] {
  if (isCompiled()) return [process.execPath];
  return [process.execPath, join(import.meta.dir, "..", "main.ts")];
}
