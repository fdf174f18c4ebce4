import { join } from "node:path";
import { assetSize, materialise } from "../../platform/assets";
import asmJsPath from "../../../node_modules/pyodide/pyodide.asm.mjs" with { type: "file" };
import asmWasmPath from "../../../node_modules/pyodide/pyodide.asm.wasm" with { type: "file" };
import lockImport from "../../../node_modules/pyodide/pyodide-lock.json" with { type: "file" };
import stdlibPath from "../../../node_modules/pyodide/python_stdlib.zip" with { type: "file" };
import pyodidePackage from "../../../node_modules/pyodide/package.json";

/** Bump when the child's loadPyodide options change, so old memory snapshots are not reused. */
export const LOAD_OPTIONS_VERSION = 1;

// `with { type: "file" }` makes this a path at run time; TypeScript types every .json import as its content.
const lockPath = lockImport as unknown as string;

export const PYODIDE_VERSION: string = pyodidePackage.version;

/**
 * Copy the Pyodide runtime out of the binary into `<cacheDir>/pyodide-<version>-<stdlib size>/`
 * so the child can load it from real files (its loader reads them with node:fs and dynamic
 * import). The binary carries the standard library with its entries stored (scripts/build.ts),
 * a run from source the zip as shipped; a memory snapshot remembers where modules sit in the
 * zip, so each variant has its own folder and snapshot.
 * Returns the directory, with a trailing slash as Pyodide's indexURL wants.
 */
export async function materialisePyodide(cacheDir: string): Promise<string> {
  const dir = join(cacheDir, `pyodide-${PYODIDE_VERSION}-${await assetSize(stdlibPath)}`);
  await Promise.all([
    materialise(asmJsPath, dir, "pyodide.asm.mjs"),
    materialise(asmWasmPath, dir, "pyodide.asm.wasm"),
    materialise(lockPath, dir, "pyodide-lock.json"),
    materialise(stdlibPath, dir, "python_stdlib.zip"),
  ]);
  return `${dir}/`;
}

/**
 * The memory snapshot is specific to this Pyodide, this Bun and the child's load options,
 * so its name carries all three; a new binary simply makes a new one.
 */
export function snapshotPath(indexDir: string): string {
  return join(indexDir, `snapshot-bun${Bun.version}-v${LOAD_OPTIONS_VERSION}.bin`);
}
