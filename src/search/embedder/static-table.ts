/**
 * Binary format of the static embedding table (little-endian):
 *   8 bytes  magic "RKBSTAT1"
 *   u32      header JSON byte length, then the header JSON (StaticTableHeader)
 *   u32      vocabulary byte length, then UTF-8 entries joined by "\n": words, then pieces
 *   padding to a multiple of 4 bytes
 *   f32[n]   piece scores (sentencepiece log-probabilities, for splitting unknown words)
 *   f32[n]   row scales: row i = int8 row i × scale i (the frequency weight is folded in)
 *   i8[n×d]  rows
 * Words are stems (tokens.ts); pieces are the teacher's lower-case sentencepiece pieces
 * with "▁" marking a word start.
 */

export const STATIC_TABLE_MAGIC = "RKBSTAT1";
/** Refuse absurd files before allocating: a table this size would not fit the binary anyway. */
export const STATIC_TABLE_ENTRIES_MAX = 1_000_000;
export const STATIC_TABLE_DIMENSIONS_MAX = 4_096;

export type StaticTableHeader = {
  id: string;
  dimensions: number;
  wordCount: number;
  pieceCount: number;
  /** How the table was made (teacher, corpus, parameters): informative, never read by code. */
  provenance: Record<string, unknown>;
};

export type StaticTable = {
  header: StaticTableHeader;
  words: string[];
  pieces: string[];
  /** One per piece. */
  pieceScores: Float32Array;
  /** One per entry: words first, then pieces. */
  rowScales: Float32Array;
  rows: Int8Array;
};

/**
 * The suffix of a table's id: a hash of its words, row scales and rows, so any change to
 * the table changes its id and databases embedded with the old one re-embed.
 */
export function staticTableContentHash(words: readonly string[], rowScales: Float32Array, rows: Int8Array): string {
  return new Bun.CryptoHasher("sha256")
    .update(words.join("\n"))
    .update(new Uint8Array(rowScales.buffer, rowScales.byteOffset, rowScales.byteLength))
    .update(new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength))
    .digest("hex")
    .slice(0, 8);
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function align4(n: number): number {
  return (n + 3) & ~3;
}

export function encodeStaticTable(table: StaticTable): Uint8Array {
  const { header, words, pieces } = table;
  const entryCount = header.wordCount + header.pieceCount;
  if (words.length !== header.wordCount || pieces.length !== header.pieceCount) throw new Error("vocabulary does not match header");
  if (table.rows.length !== entryCount * header.dimensions || table.rowScales.length !== entryCount) throw new Error("rows do not match header");
  if (table.pieceScores.length !== header.pieceCount) throw new Error("piece scores do not match header");
  if ([...words, ...pieces].some((e) => e.includes("\n") || e.length === 0)) throw new Error("vocabulary entry empty or contains a newline");
  const headerBytes = encoder.encode(JSON.stringify(header));
  const vocabBytes = encoder.encode([...words, ...pieces].join("\n"));
  const vocabEnd = 8 + 4 + headerBytes.length + 4 + vocabBytes.length;
  const floatsStart = align4(vocabEnd);
  const rowsStart = floatsStart + 4 * (header.pieceCount + entryCount);
  const out = new Uint8Array(rowsStart + table.rows.length);
  const view = new DataView(out.buffer);
  out.set(encoder.encode(STATIC_TABLE_MAGIC), 0);
  view.setUint32(8, headerBytes.length, true);
  out.set(headerBytes, 12);
  view.setUint32(12 + headerBytes.length, vocabBytes.length, true);
  out.set(vocabBytes, 16 + headerBytes.length);
  let offset = floatsStart;
  for (const x of [...table.pieceScores, ...table.rowScales]) {
    view.setFloat32(offset, x, true);
    offset += 4;
  }
  out.set(new Uint8Array(table.rows.buffer, table.rows.byteOffset, table.rows.length), rowsStart);
  return out;
}

export function decodeStaticTable(bytes: Uint8Array): StaticTable {
  const fail = (why: string): never => {
    throw new Error(`static embedding table is corrupt: ${why}`);
  };
  if (bytes.length < 16 || decoder.decode(bytes.subarray(0, 8)) !== STATIC_TABLE_MAGIC) fail("bad magic");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = view.getUint32(8, true);
  if (12 + headerLength + 4 > bytes.length) fail("header overruns file");
  const header = JSON.parse(decoder.decode(bytes.subarray(12, 12 + headerLength))) as StaticTableHeader;
  const { dimensions, wordCount, pieceCount } = header;
  for (const [name, value, max] of [
    ["dimensions", dimensions, STATIC_TABLE_DIMENSIONS_MAX],
    ["wordCount", wordCount, STATIC_TABLE_ENTRIES_MAX],
    ["pieceCount", pieceCount, STATIC_TABLE_ENTRIES_MAX],
  ] as const) {
    if (!Number.isInteger(value) || value < 1 || value > max) fail(`${name} ${value} out of range`);
  }
  const entryCount = wordCount + pieceCount;
  const vocabLength = view.getUint32(12 + headerLength, true);
  const vocabStart = 16 + headerLength;
  const floatsStart = align4(vocabStart + vocabLength);
  const rowsStart = floatsStart + 4 * (pieceCount + entryCount);
  if (rowsStart + entryCount * dimensions !== bytes.length) fail("size does not match header");
  const entries = decoder.decode(bytes.subarray(vocabStart, vocabStart + vocabLength)).split("\n");
  if (entries.length !== entryCount) fail("vocabulary size does not match header");
  // Copy into aligned buffers: the embedded file's bytes may start at any offset.
  const floats = new Float32Array(pieceCount + entryCount);
  for (let i = 0; i < floats.length; i++) floats[i] = view.getFloat32(floatsStart + 4 * i, true);
  return {
    header,
    words: entries.slice(0, wordCount),
    pieces: entries.slice(wordCount),
    pieceScores: floats.subarray(0, pieceCount),
    rowScales: floats.subarray(pieceCount),
    rows: new Int8Array(bytes.slice(rowsStart).buffer),
  };
}
