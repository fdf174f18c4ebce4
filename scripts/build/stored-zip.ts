import { inflateRawSync } from "node:zlib";

/**
 * The same ZIP archive with every entry stored instead of deflated. zstd packs the stored
 * texts far better than it can pack deflate's output (Pyodide's standard library: 2.55 MB
 * as shipped, 1.65 MB stored then packed), and zipimport reads stored entries as well.
 * Entry names, order, dates, CRCs and attributes are kept; local extra fields are dropped.
 */
export function storedZip(zip: Uint8Array): Uint8Array {
  const view = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  const end = findEndOfCentralDirectory(view);
  const entries = view.getUint16(end + 10, true);
  let central = view.getUint32(end + 16, true);
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (let i = 0; i < entries; i++) {
    if (view.getUint32(central, true) !== 0x02014b50) throw new Error("storedZip: bad central directory entry");
    const method = view.getUint16(central + 10, true);
    const compressedBytes = view.getUint32(central + 20, true);
    const nameBytes = view.getUint16(central + 28, true);
    const centralLength = 46 + nameBytes + view.getUint16(central + 30, true) + view.getUint16(central + 32, true);
    const local = view.getUint32(central + 42, true);
    if (view.getUint32(local, true) !== 0x04034b50) throw new Error("storedZip: bad local header");
    const dataStart = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const raw = zip.subarray(dataStart, dataStart + compressedBytes);
    const data = method === 8 ? new Uint8Array(inflateRawSync(raw)) : method === 0 ? raw : null;
    if (!data) throw new Error(`storedZip: entry compression method ${method} is not supported`);
    if (data.byteLength !== view.getUint32(central + 24, true)) throw new Error("storedZip: entry size mismatch");

    const header = new Uint8Array(30 + nameBytes);
    const h = new DataView(header.buffer);
    header.set(zip.subarray(local, local + 26), 0);
    h.setUint16(6, view.getUint16(central + 8, true) & ~0x0008, true); // no data descriptor
    h.setUint16(8, 0, true);
    h.setUint32(14, view.getUint32(central + 16, true), true);
    h.setUint32(18, data.byteLength, true);
    h.setUint32(22, data.byteLength, true);
    h.setUint16(26, nameBytes, true);
    h.setUint16(28, 0, true);
    header.set(zip.subarray(central + 46, central + 46 + nameBytes), 30);
    locals.push(header, data);

    const entry = zip.slice(central, central + centralLength);
    const c = new DataView(entry.buffer);
    c.setUint16(8, view.getUint16(central + 8, true) & ~0x0008, true);
    c.setUint16(10, 0, true);
    c.setUint32(20, data.byteLength, true);
    c.setUint32(42, offset, true);
    centrals.push(entry);
    offset += header.byteLength + data.byteLength;
    central += centralLength;
  }
  const centralBytes = centrals.reduce((n, c) => n + c.byteLength, 0);
  const eocd = zip.slice(end);
  const e = new DataView(eocd.buffer);
  e.setUint32(12, centralBytes, true);
  e.setUint32(16, offset, true);
  return new Uint8Array(Buffer.concat([...locals, ...centrals, eocd]));
}

function findEndOfCentralDirectory(view: DataView): number {
  // The record is 22 bytes plus a comment of at most 65,535 bytes, at the very end.
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === 0x06054b50) return at;
  }
  throw new Error("storedZip: no end of central directory (not a ZIP?)");
}
