// Compiles the whole product into one self-contained executable: dist/regkb, with the
// search worker (src/search/vector-worker.ts) as a second entry point inside it.
// Embedded assets (sqlite-vec, Pyodide, the embedding table, the sample corpus, page
// assets) are pulled in by their `with { type: "file" }` imports.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BUN_HEADER_BYTES_MAX } from "../src/http/header-limit";

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "regkb");
mkdirSync(join(root, "dist"), { recursive: true });

const started = performance.now();
const proc = Bun.spawnSync(
  [process.execPath, "build", "--compile", `--compile-exec-argv=--max-http-header-size=${BUN_HEADER_BYTES_MAX}`, "--minify-syntax", "--minify-whitespace", "--sourcemap=none", join(root, "src", "main.ts"), join(root, "src", "search", "vector-worker.ts"), "--outfile", outfile],
  { cwd: root, stdout: "inherit", stderr: "inherit" },
);
if (proc.exitCode !== 0) {
  console.error("build failed");
  process.exit(proc.exitCode ?? 1);
}
const mib = (Bun.file(outfile).size / 1024 / 1024).toFixed(1);
console.log(`built ${outfile} (${mib} MiB) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
