import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { buildGraph, circles, describeEdge, importsOf, layerOf, upwardImports } from "../../scripts/import-graph";

const graph = buildGraph(join(import.meta.dir, "..", "..", "src"));

describe("the import graph of src/", () => {
  test("every file has a place in the layer table", () => {
    expect(upwardImports(graph).unplaced).toEqual([]);
  });

  test("no import points up a layer (edge → service → core → ground), type-only imports included", () => {
    expect(upwardImports(graph).upward.map(describeEdge)).toEqual([]);
  });

  test("no circle", () => {
    expect(circles(graph).map((c) => `circle of ${c.length} files: ${c.map((f) => `src/${f}`).join(", ")}`)).toEqual([]);
  });

  test("the graph is read in full (a parser that saw nothing would pass the checks above)", () => {
    expect(graph.files.length).toBeGreaterThan(150);
    expect(graph.edges.length).toBeGreaterThan(500);
    expect(graph.edges.some((e) => e.from === "jobs/engine.ts" && e.to === "lifecycle.ts" && e.typeOnly)).toBe(true);
    expect(graph.edges.some((e) => e.from === "main.ts" && e.to === "cli/index.ts")).toBe(true);
  });
});

describe("the import parser", () => {
  test("sees every kind of import and ignores commented ones", () => {
    const found = importsOf(`
import { a } from "./a";
import type { B } from "../b";
import { type C, type D } from "./c";
import e, { f } from "./e";
export { g } from "./g";
export type { H } from "./h";
export * from "./star";
import "./side-effect";
const i = await import("./dynamic");
type J = typeof import("./typeof");
import {
  k,
  l,
} from "./multi-line";
// import { x } from "./commented";
/* import { y } from "./block-commented"; */
const s = "import { z } from './in-a-string'";
import { Database } from "bun:sqlite";
`);
    expect(found).toEqual([
      { specifier: "./a", typeOnly: false },
      { specifier: "../b", typeOnly: true },
      { specifier: "./c", typeOnly: true },
      { specifier: "./e", typeOnly: false },
      { specifier: "./g", typeOnly: false },
      { specifier: "./h", typeOnly: true },
      { specifier: "./star", typeOnly: false },
      { specifier: "./multi-line", typeOnly: false },
      { specifier: "./side-effect", typeOnly: false },
      { specifier: "./dynamic", typeOnly: false },
      { specifier: "./typeof", typeOnly: true },
    ]);
  });

  test("places files by the layer table, exceptions before their folder", () => {
    expect(layerOf("http/auth.ts")).toBe(3);
    expect(layerOf("search/routes.ts")).toBe(3);
    expect(layerOf("search/perform.ts")).toBe(2);
    expect(layerOf("search/service.ts")).toBe(1);
    expect(layerOf("errors.ts")).toBe(0);
  });
});
