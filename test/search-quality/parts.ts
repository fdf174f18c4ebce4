/**
 * Search quality as the six parts of the search-quality work are added one after another:
 * titles, the vocabulary bridge, the trained dense embedder, named jurisdictions, the
 * learned ranker, folding. Prints markdown tables (nDCG@10 / recall@10 / MRR@10) for BM25
 * only, dense only and hybrid, per category, on the chosen split.
 *
 *   bun test/search-quality/parts.ts --v1-table FILE [--split test|tuning] [--untitled FILE]
 *
 * --v1-table: the previous static table (regkb-static-v1.bin, made by
 *   scripts/distil-embeddings.ts), for the rows before the trained embedder.
 * --untitled: passages.jsonl as shipped before titles (git show <commit>:data/corpus/passages.jsonl).
 */
import { parsePassagesJsonl } from "../../src/search/corpus/passages";
import { StaticEmbedder } from "../../src/search/embedder/static";
import type { SearchMethod } from "../../src/search/request";
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from "../../src/search/tuning";
import { buildEvalIndex, report, type EvalIndex, type Split } from "./evaluate";

const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const split = (arg("--split") ?? "test") as Split;
const v1Path = arg("--v1-table");
const untitledPath = arg("--untitled");
if (v1Path === undefined || untitledPath === undefined) {
  console.error("usage: bun test/search-quality/parts.ts --v1-table FILE --untitled FILE [--split test|tuning]");
  process.exit(2);
}

const none: Partial<SearchTuning> = { expansionSources: [], mentions: false, rerank: false, fold: false };
const rows: { name: string; index: "untitled-v1" | "titled-v1" | "titled-v2"; tuning: Partial<SearchTuning> }[] = [
  { name: "0. none of the parts", index: "untitled-v1", tuning: none },
  { name: "1. + titles", index: "titled-v1", tuning: none },
  { name: "2. + vocabulary bridge", index: "titled-v1", tuning: { ...none, expansionSources: DEFAULT_SEARCH_TUNING.expansionSources } },
  { name: "3. + trained dense embedder", index: "titled-v2", tuning: { ...none, expansionSources: DEFAULT_SEARCH_TUNING.expansionSources } },
  { name: "4. + named jurisdictions", index: "titled-v2", tuning: { rerank: false, fold: false } },
  { name: "5. + learned ranker", index: "titled-v2", tuning: { fold: false } },
  { name: "6. + folding (all six)", index: "titled-v2", tuning: {} },
];

const v1 = await StaticEmbedder.load(v1Path);
const indexes: Record<string, EvalIndex> = {
  "untitled-v1": await buildEvalIndex({ embedder: v1, passages: parsePassagesJsonl(await Bun.file(untitledPath).text(), untitledPath) }),
  "titled-v1": await buildEvalIndex({ embedder: v1 }),
  "titled-v2": await buildEvalIndex(),
};
try {
  const methods: SearchMethod[] = ["bm25", "vector", "hybrid"];
  const all: { name: string; cells: string[][] }[] = [];
  for (const row of rows) all.push({ name: row.name, cells: await report(indexes[row.index]!, split, { ...DEFAULT_SEARCH_TUNING, ...row.tuning }, methods) });
  console.log(`### ${split} half, all categories (nDCG@10 / recall@10 / MRR@10)\n`);
  console.log("| | BM25 only | dense only | hybrid |\n|---|---|---|---|");
  for (const r of all) console.log(`| ${r.name} | ${r.cells[0]!.slice(1).join(" | ")} |`);
  const categories = all[0]!.cells.map((c) => c[0]!);
  console.log(`\n### ${split} half, hybrid per category\n`);
  console.log(`| | ${categories.join(" | ")} |\n|---|${categories.map(() => "---").join("|")}|`);
  for (const r of all) console.log(`| ${r.name} | ${r.cells.map((c) => c[3]!).join(" | ")} |`);
  const last = all[all.length - 1]!;
  console.log(`\n### ${split} half, all six parts, per category and method\n`);
  console.log("| category | BM25 only | dense only | hybrid |\n|---|---|---|---|");
  for (const c of last.cells) console.log(`| ${c.join(" | ")} |`);
} finally {
  for (const index of Object.values(indexes)) index.close();
}
