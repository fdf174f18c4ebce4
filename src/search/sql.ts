/** Helpers the search index's SQL modules share. */

/** Rows read per query while rebuilding, sampling or moving index rows: bounds memory. */
export const REBUILD_BATCH_ROWS = 10_000;

/** `?, ?, …`: one placeholder per value of an IN list. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}

/** A float vector as SQLite stores it (a blob of float32s). */
export function floatsOfBlob(blob: Uint8Array): Float32Array {
  return new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}
