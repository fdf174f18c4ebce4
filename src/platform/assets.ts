import { mkdirSync, existsSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Embedded files (`import p from "…" with { type: "file" }`) live in the binary's
 * virtual filesystem under --compile. dlopen, Workers and child processes need a real
 * file, so we copy each one once into `<dataDir>/cache/` (`name` may include a versioned subfolder) and reuse it after.
 */
export async function materialise(embeddedPath: string, cacheDir: string, name: string): Promise<string> {
  const target = join(cacheDir, name);
  mkdirSync(dirname(target), { recursive: true });
  const source = Bun.file(embeddedPath);
  if (existsSync(target) && statSync(target).size === source.size) return target;
  // Write then rename so a crash mid-copy never leaves a half file that looks complete.
  const partial = `${target}.${process.pid}.partial`;
  await Bun.write(partial, source);
  renameSync(partial, target);
  return target;
}

/** True when running from `bun build --compile` output rather than from source. */
export function isCompiled(): boolean {
  return import.meta.path.startsWith("/$bunfs/") || import.meta.path.startsWith("B:/~BUN/");
}
