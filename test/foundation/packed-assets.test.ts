// Packing embedded files (scripts/build.ts) and unpacking them at run time (src/platform/assets.ts).
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { storedZip } from "../../scripts/build/stored-zip";
import { assetSize, materialise, packAsset, readAsset } from "../../src/platform/assets";
import { tempDir } from "../helpers/server";

const dir = tempDir("regkb-packed-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a packed file (float32 planes byte-shuffled) reads back exactly, and materialises unpacked", async () => {
  const floats = new Float32Array(10_000).map((_, i) => Math.sin(i) * 0.01);
  const bytes = new Uint8Array(floats.buffer);
  const packed = packAsset(bytes, 4, 3);
  expect(packed.byteLength).toBeLessThan(bytes.byteLength);
  writeFileSync(join(dir, "weights.rkz"), packed);
  expect(await readAsset(join(dir, "weights.rkz"))).toEqual(bytes);
  expect(await assetSize(join(dir, "weights.rkz"))).toBe(bytes.byteLength);
  const target = await materialise(join(dir, "weights.rkz"), join(dir, "cache"), "v1/weights.bin");
  expect(new Uint8Array(readFileSync(target))).toEqual(bytes);
  // Materialised once: a second call keeps the file.
  const { mtimeMs } = statSync(target);
  await Bun.sleep(10);
  await materialise(join(dir, "weights.rkz"), join(dir, "cache"), "v1/weights.bin");
  expect(statSync(target).mtimeMs).toBe(mtimeMs);
});

test("a file that is not packed reads as it is", async () => {
  writeFileSync(join(dir, "plain.txt"), "RKZ is not a header here");
  expect(new TextDecoder().decode(await readAsset(join(dir, "plain.txt")))).toBe("RKZ is not a header here");
  expect(await assetSize(join(dir, "plain.txt"))).toBe(24);
});

test("storedZip stores every entry of Pyodide's standard library: its sources appear verbatim, and storing again changes nothing", () => {
  const zip = new Uint8Array(readFileSync(join(import.meta.dir, "..", "..", "node_modules", "pyodide", "python_stdlib.zip")));
  const stored = storedZip(zip);
  const text = Buffer.from(stored).toString("latin1");
  expect(Buffer.from(zip).toString("latin1")).not.toContain("def dumps(obj, *, skipkeys=False");
  expect(text).toContain("def dumps(obj, *, skipkeys=False");
  expect(text).toContain("json/__init__.py");
  // Stored → stored is the identity: every offset, size and flag written the first time is what a reader finds.
  expect(storedZip(stored)).toEqual(stored);
  // 9.6 MB of entries plus their headers.
  expect(stored.byteLength).toBeGreaterThan(9_596_411);
  expect(stored.byteLength).toBeLessThan(9_596_411 + 100_000);
});
