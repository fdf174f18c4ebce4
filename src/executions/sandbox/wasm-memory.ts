/**
 * Rewrites the maximum of the memory a WebAssembly module defines. Pyodide's module declares
 * 4 GiB (wasm32's whole range); with a lower maximum the engine itself refuses to grow past
 * it, so Python's allocator gets NULL and raises MemoryError, whatever JavaScript tries.
 */

export const WASM_PAGE_BYTES = 64 * 1024;
const HEADER_BYTES = 8;
const MEMORY_SECTION = 5;
const LIMITS_HAS_MAXIMUM = 0x01;
const LIMITS_MEMORY64 = 0x04;

export class WasmMemoryError extends Error {}

function readLeb(bytes: Uint8Array, offset: number): { value: number; next: number } {
  let value = 0;
  let shift = 0;
  for (let at = offset; at < bytes.length && shift < 35; at++, shift += 7) {
    const byte = bytes[at]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return { value, next: at + 1 };
  }
  throw new WasmMemoryError("malformed LEB128 in the wasm module");
}

function leb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value % 128;
    value = Math.floor(value / 128);
    if (value > 0) byte |= 0x80;
    out.push(byte);
  } while (value > 0);
  return out;
}

/** The module with its one defined memory's maximum set to `maximumPages`; null when it defines no memory. */
export function withMemoryMaximum(module: Uint8Array, maximumPages: number): Uint8Array<ArrayBuffer> | null {
  for (let offset = HEADER_BYTES; offset < module.length; ) {
    const id = module[offset]!;
    const size = readLeb(module, offset + 1);
    const end = size.next + size.value;
    if (id !== MEMORY_SECTION) {
      offset = end;
      continue;
    }
    const count = readLeb(module, size.next);
    if (count.value !== 1) throw new WasmMemoryError(`the wasm module defines ${count.value} memories, expected 1`);
    const flags = module[count.next]!;
    if (flags & LIMITS_MEMORY64) throw new WasmMemoryError("the wasm module's memory is 64-bit");
    const minimum = readLeb(module, count.next + 1);
    if (minimum.value > maximumPages) {
      throw new WasmMemoryError(`the module needs ${minimum.value * WASM_PAGE_BYTES} bytes of memory at start, above the limit`);
    }
    const payload = [1, flags | LIMITS_HAS_MAXIMUM, ...leb(minimum.value), ...leb(maximumPages)];
    const section = new Uint8Array([MEMORY_SECTION, ...leb(payload.length), ...payload]);
    const out = new Uint8Array(offset + section.length + module.length - end);
    out.set(module.subarray(0, offset), 0);
    out.set(section, offset);
    out.set(module.subarray(end), offset + section.length);
    return out;
  }
  return null;
}
