// The import graph of src/: files, edges, circles (strongly connected components) and
// imports that point up the layer table. Run `bun scripts/import-graph.ts` for the figures;
// test/architecture/imports.test.ts uses the same module to keep the layers pointing down.
import { Glob } from "bun";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";

export interface ImportEdge {
  from: string;
  to: string;
  /** The specifier as written, for messages. */
  specifier: string;
  typeOnly: boolean;
}

export interface ImportGraph {
  files: string[];
  edges: ImportEdge[];
  lines: Map<string, number>;
}

/**
 * Layers, highest first. A file may import its own layer or any lower one; within a layer
 * the only rule is no circle. The first matching prefix wins, so exceptions come first.
 */
export const LAYERS: { name: string; prefixes: string[] }[] = [
  {
    name: "edge",
    prefixes: [
      "main.ts", "app.ts", "server.ts", "deps.ts", "background.ts", "run-kinds.ts",
      // The billing timer drives work the way a request does: an entry point, not a service.
      "billing/ticker.ts",
      "http/", "dashboard/", "cli/", "mcp/", "system/",
      "billing/routes.ts", "billing/schemas.ts", "documents/routes.ts", "executions/routes.ts",
      "jurisdictions/routes.ts", "screenings/routes.ts", "search/routes.ts", "search/schemas.ts",
    ],
  },
  {
    name: "service",
    prefixes: [
      "auth/", "screenings/", "documents/", "executions/", "jurisdictions/",
      "billing/grants.ts", "billing/top-ups.ts", "billing/stripe.ts", "billing/payments.ts",
      "billing/operator.ts", "billing/ticker.ts",
      "search/perform.ts", "search/corpus/import.ts",
    ],
  },
  {
    name: "core",
    prefixes: [
      "billing/ledger.ts", "billing/ledger-keys.ts", "billing/pricing.ts", "billing/store.ts", "billing/verify-postgres.ts",
      "billing/transaction.ts", "jobs/", "search/",
    ],
  },
  {
    name: "ground",
    prefixes: [
      "db/", "platform/", "errors.ts", "clock.ts", "log.ts", "ids.ts", "config.ts", "version.ts",
      "metrics.ts", "lifecycle.ts", "embedder-settings.ts",
    ],
  },
];

/** The layer's rank (0 = ground) for a path relative to src/, or undefined if the table misses it. */
export function layerOf(file: string): number | undefined {
  for (let i = 0; i < LAYERS.length; i++) {
    if (LAYERS[i]!.prefixes.some((p) => (p.endsWith("/") ? file.startsWith(p) : file === p))) return LAYERS.length - 1 - i;
  }
  return undefined;
}

export function layerName(rank: number): string {
  return LAYERS[LAYERS.length - 1 - rank]!.name;
}

/** Source text with comments blanked out (strings and templates kept), so commented imports do not count. */
export function stripComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

const STATIC_IMPORT = /(?:^|[;\n}])\s*(import|export)\s+(type\s+)?([^;"'`]*?)\s*from\s*["']([^"']+)["']/g;
const BARE_IMPORT = /(?:^|[;\n}])\s*import\s*["']([^"']+)["']/g;
const DYNAMIC_IMPORT = /(typeof\s+)?\bimport\s*\(\s*["']([^"']+)["']\s*\)/g;

/** Relative imports of one file: static, re-exports, side-effect, dynamic and `typeof import()`. */
export function importsOf(text: string): { specifier: string; typeOnly: boolean }[] {
  const code = stripComments(text);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  for (const m of code.matchAll(STATIC_IMPORT)) {
    const clause = m[3]!.trim();
    // `import { type A, type B }` brings in no value either.
    const named = /^\{([^}]*)\}$/.exec(clause);
    const allTypes = named !== null && named[1]!.split(",").map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith("type "));
    found.push({ specifier: m[4]!, typeOnly: m[2] !== undefined || allTypes });
  }
  for (const m of code.matchAll(BARE_IMPORT)) found.push({ specifier: m[1]!, typeOnly: false });
  for (const m of code.matchAll(DYNAMIC_IMPORT)) found.push({ specifier: m[2]!, typeOnly: m[1] !== undefined });
  return found.filter((f) => f.specifier.startsWith("."));
}

function resolveTs(srcDir: string, from: string, specifier: string): string | undefined {
  const base = normalize(join(dirname(from), specifier));
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    const full = join(srcDir, candidate);
    if (candidate.endsWith(".ts") && !candidate.endsWith(".d.ts") && existsSync(full) && statSync(full).isFile()) return candidate;
  }
  return undefined;
}

export function buildGraph(srcDir: string): ImportGraph {
  const files = [...new Glob("**/*.ts").scanSync(srcDir)].filter((f) => !f.endsWith(".d.ts")).sort();
  const edges: ImportEdge[] = [];
  const lines = new Map<string, number>();
  for (const from of files) {
    const text = readFileSync(join(srcDir, from), "utf8");
    lines.set(from, text.split("\n").length);
    for (const { specifier, typeOnly } of importsOf(text)) {
      const to = resolveTs(srcDir, from, specifier);
      if (to !== undefined && to !== from) edges.push({ from, to, specifier, typeOnly });
    }
  }
  return { files, edges, lines };
}

/** Strongly connected components of more than one file (Tarjan), largest first. */
export function circles(graph: ImportGraph): string[][] {
  const out = new Map<string, string[]>();
  for (const e of graph.edges) out.set(e.from, [...(out.get(e.from) ?? []), e.to]);
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of out.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const f of graph.files) if (!index.has(f)) visit(f);
  return found.sort((a, b) => b.length - a.length);
}

/** Imports from a lower layer to a higher one, and files the layer table does not place. */
export function upwardImports(graph: ImportGraph): { upward: ImportEdge[]; unplaced: string[] } {
  const unplaced = graph.files.filter((f) => layerOf(f) === undefined);
  const upward = graph.edges.filter((e) => {
    const from = layerOf(e.from);
    const to = layerOf(e.to);
    return from !== undefined && to !== undefined && to > from;
  });
  return { upward, unplaced };
}

export function describeEdge(e: ImportEdge): string {
  const kind = e.typeOnly ? "type import" : "import";
  return `src/${e.from} (${layerName(layerOf(e.from)!)}) has ${kind} "${e.specifier}" -> src/${e.to} (${layerName(layerOf(e.to)!)})`;
}

if (import.meta.main) {
  const srcDir = join(import.meta.dir, "..", "src");
  const graph = buildGraph(srcDir);
  const found = circles(graph);
  const { upward, unplaced } = upwardImports(graph);
  console.log(`files ${graph.files.length}, edges ${graph.edges.length} (${graph.edges.filter((e) => e.typeOnly).length} type-only)`);
  console.log(`circles ${found.length}: sizes [${found.map((c) => c.length).join(", ")}]`);
  for (const c of found) console.log(`  ${c.join(" ")}`);
  console.log(`upward imports ${upward.length}`);
  for (const e of upward) console.log(`  ${describeEdge(e)}`);
  if (unplaced.length > 0) console.log(`not in the layer table: ${unplaced.join(" ")}`);
  const largest = [...graph.lines].sort((a, b) => b[1] - a[1]).slice(0, 10);
  console.log("largest files (lines)");
  for (const [file, n] of largest) console.log(`  ${String(n).padStart(5)} ${file}`);
}
