import { expect, test } from "bun:test";
import { WasmMemoryError, withMemoryMaximum } from "../../src/executions/sandbox/wasm-memory";

const HEADER = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
/** Export section: the memory 0 as "mem". */
const EXPORT_MEMORY = [0x07, 0x07, 0x01, 0x03, ...new TextEncoder().encode("mem"), 0x02, 0x00];

/** A module that defines one memory with these limits and exports it. */
function moduleWithMemory(limits: number[]): Uint8Array {
  return new Uint8Array([...HEADER, 0x05, limits.length + 1, 0x01, ...limits, ...EXPORT_MEMORY]);
}

function exportedMemory(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Memory {
  return new WebAssembly.Instance(new WebAssembly.Module(bytes)).exports.mem as WebAssembly.Memory;
}

test("the engine refuses to grow the memory past the new maximum", () => {
  // No maximum at all (flags 0, minimum 1 page), and a 4 GiB one (65536 pages, a 3-byte LEB128).
  for (const limits of [[0x00, 0x01], [0x01, 0x01, 0x80, 0x80, 0x04]]) {
    const memory = exportedMemory(withMemoryMaximum(moduleWithMemory(limits), 3)!);
    expect(memory.buffer.byteLength).toBe(64 * 1024);
    memory.grow(2);
    expect(() => memory.grow(1)).toThrow(RangeError);
    expect(memory.buffer.byteLength).toBe(3 * 64 * 1024);
  }
});

test("a module without a memory is left alone; one that needs more than the maximum at start is refused", () => {
  expect(withMemoryMaximum(new Uint8Array([...HEADER]), 3)).toBeNull();
  expect(() => withMemoryMaximum(moduleWithMemory([0x00, 0x05]), 3)).toThrow(WasmMemoryError);
});
