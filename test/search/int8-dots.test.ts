import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { int8DotsModuleSource, WASM_MODULE_FILE } from "../../scripts/build-wasm";
import { Int8RowSet } from "../../src/search/simd/int8-dots";

const reference = (a: Int8Array, b: Int8Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

test("the committed kernel is the one int8-dots.wat builds (run scripts/build-wasm.ts)", async () => {
  expect(readFileSync(WASM_MODULE_FILE, "utf8")).toBe(await int8DotsModuleSource());
});

test("dot products are exact for any dimensions (padded to 16) and any values, extremes included", () => {
  // A few sets made once, rows rewritten each run: making WebAssembly memory is the slow part.
  const sets = [1, 7, 15, 16, 17, 33, 128].map((dimensions) => new Int8RowSet(dimensions, 12, 12));
  const int8 = fc.integer({ min: -128, max: 127 });
  fc.assert(
    fc.property(
      fc.constantFrom(...sets).chain((set) =>
        fc.record({
          set: fc.constant(set),
          query: fc.array(int8, { minLength: set.dimensions, maxLength: set.dimensions }),
          rows: fc.array(fc.array(int8, { minLength: set.dimensions, maxLength: set.dimensions }), { minLength: 1, maxLength: 12 }),
        }),
      ),
      ({ set, query, rows }) => {
        rows.forEach((r, i) => set.setRow(i, Int8Array.from(r)));
        set.setQuery(Int8Array.from(query));
        const expected = rows.map((r) => reference(Int8Array.from(query), Int8Array.from(r)));
        expect([...set.dots(0, rows.length)]).toEqual(expected);
        // A slice of the rows, as one partition of many is scanned.
        if (rows.length > 2) expect([...set.dots(1, rows.length - 2)]).toEqual(expected.slice(1, -1));
      },
    ),
    { numRuns: 300 },
  );
});

test("the largest sum the shortlist can reach (every product −128 · −128) stays exact", () => {
  const dimensions = 1536;
  const set = new Int8RowSet(dimensions, 1, 1);
  set.setRow(0, new Int8Array(dimensions).fill(-128));
  set.setQuery(new Int8Array(dimensions).fill(-128));
  expect(set.dots(0, 1)[0]).toBe(dimensions * 128 * 128);
});

test("rows outside the set and vectors of the wrong size are refused, not read past", () => {
  const set = new Int8RowSet(16, 4, 2);
  expect(() => set.dots(3, 2)).toThrow("outside the set");
  expect(() => set.dots(0, 3)).toThrow("outside the set");
  expect(() => set.setRow(0, new Int8Array(15))).toThrow("15 dimensions");
  expect(() => set.setQuery(new Int8Array(17))).toThrow("17 dimensions");
});
