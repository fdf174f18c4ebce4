import { mkdirSync, existsSync, renameSync, statSync } from "node:fs";
import { dirname, join } from "node:path";

/**
 * Embedded files (`import p from "…" with { type: "file" }`) live in the binary's
 * virtual filesystem under --compile. Those read once are packed by the build
 * (scripts/build.ts: zstd, float arrays byte-shuffled first), so read them with
 * readAsset/readAssetText, which unpack a packed file and pass any other through: from
 * source the same imports are the plain files.
 *
 * Packed layout: "RKZ1", the byte-shuffle stride (1 byte: 1 = none, 4 = float32 planes),
 * 3 zero bytes, the unpacked size (u64 little-endian), then one zstd frame.
 */
const PACKED_MAGIC = "RKZ1";
const PACKED_HEADER_BYTES = 16;
const SHUFFLE_STRIDES = [1, 4] as const;
export type ShuffleStride = (typeof SHUFFLE_STRIDES)[number];

/** The build's side: `stride` 4 stores a float32 array as four byte planes, which zstd packs far better. */
export function packAsset(bytes: Uint8Array, stride: ShuffleStride, level: number): Uint8Array {
  if (bytes.byteLength % stride !== 0) throw new Error(`packAsset: ${bytes.byteLength} bytes is not a multiple of the stride ${stride}`);
  const frame = Bun.zstdCompressSync(shuffle(bytes, stride), { level });
  const packed = new Uint8Array(PACKED_HEADER_BYTES + frame.byteLength);
  packed.set(new TextEncoder().encode(PACKED_MAGIC), 0);
  packed[4] = stride;
  new DataView(packed.buffer).setBigUint64(8, BigInt(bytes.byteLength), true);
  packed.set(frame, PACKED_HEADER_BYTES);
  return packed;
}

/** The file's bytes, unpacked if the build packed it. */
export async function readAsset(path: string): Promise<Uint8Array<ArrayBuffer>> {
  const bytes = await Bun.file(path).bytes();
  const header = packedHeader(bytes);
  if (!header) return bytes;
  const unpacked = await Bun.zstdDecompress(bytes.subarray(PACKED_HEADER_BYTES));
  if (unpacked.byteLength !== header.sizeBytes) throw new Error(`embedded ${path}: unpacked ${unpacked.byteLength} bytes, expected ${header.sizeBytes}`);
  return unshuffle(unpacked, header.stride) as Uint8Array<ArrayBuffer>;
}

export async function readAssetText(path: string): Promise<string> {
  return new TextDecoder().decode(await readAsset(path));
}

/** The unpacked size of an embedded file, reading only its header. */
export async function assetSize(path: string): Promise<number> {
  const file = Bun.file(path);
  return packedHeader(await file.slice(0, PACKED_HEADER_BYTES).bytes())?.sizeBytes ?? file.size;
}

function packedHeader(bytes: Uint8Array): { stride: ShuffleStride; sizeBytes: number } | null {
  if (bytes.byteLength < PACKED_HEADER_BYTES || new TextDecoder().decode(bytes.subarray(0, 4)) !== PACKED_MAGIC) return null;
  const stride = bytes[4] as ShuffleStride;
  if (!SHUFFLE_STRIDES.includes(stride)) throw new Error(`packed asset with an unknown stride ${stride}`);
  return { stride, sizeBytes: Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(8, true)) };
}

function shuffle(bytes: Uint8Array, stride: number): Uint8Array {
  if (stride === 1) return bytes;
  const count = bytes.byteLength / stride;
  const out = new Uint8Array(bytes.byteLength);
  for (let i = 0; i < count; i++) for (let b = 0; b < stride; b++) out[b * count + i] = bytes[i * stride + b]!;
  return out;
}

function unshuffle(bytes: Uint8Array, stride: number): Uint8Array {
  if (stride === 1) return bytes;
  const count = bytes.byteLength / stride;
  const out = new Uint8Array(bytes.byteLength);
  for (let b = 0; b < stride; b++) {
    const plane = bytes.subarray(b * count, (b + 1) * count);
    for (let i = 0; i < count; i++) out[i * stride + b] = plane[i]!;
  }
  return out;
}

/**
 * dlopen, Workers and child processes need a real file, so we copy an embedded file once
 * (unpacked) into `<dataDir>/cache/` (`name` may include a versioned subfolder) and reuse it after.
 */
export async function materialise(embeddedPath: string, cacheDir: string, name: string): Promise<string> {
  const target = join(cacheDir, name);
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(target) && statSync(target).size === (await assetSize(embeddedPath))) return target;
  // Write then rename so a crash mid-copy never leaves a half file that looks complete.
  const partial = `${target}.${process.pid}.partial`;
  await Bun.write(partial, await readAsset(embeddedPath));
  renameSync(partial, target);
  return target;
}

/** True when running from `bun build --compile` output rather than from source. */
export function isCompiled(): boolean {
  return import.meta.path.startsWith("/$bunfs/") || import.meta.path.startsWith("B:/~BUN/");
}
