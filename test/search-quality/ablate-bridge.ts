/**
 * What each source of the vocabulary bridge adds: the ranker refitted on the tuning half
 * without that source (and with none / only it), scored by 5-fold cross-validation on the
 * tuning half (nDCG@10 of the re-ranked candidates). The test half is never read.
 *
 *   bun test/search-quality/ablate-bridge.ts
 */
import { collectRows, fitWeights, rerankedNdcg } from "../../scripts/fit-ranker";
import { EXPANSION_SOURCES, type ExpansionSource } from "../../src/search/lexicon";
import { FEATURES } from "../../src/search/rank/features";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { buildEvalIndex, questionsOf } from "./evaluate";

const FOLDS = 5;
const LAMBDA = 0.3;
const index = await buildEvalIndex();
const questions = questionsOf("tuning").sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.id < b.id ? -1 : 1));
const variants: [string, readonly ExpansionSource[]][] = [
  ["all sources", EXPANSION_SOURCES],
  ["none", []],
  ...EXPANSION_SOURCES.map((s): [string, ExpansionSource[]] => [`without ${s}`, EXPANSION_SOURCES.filter((x) => x !== s)]),
  ...EXPANSION_SOURCES.map((s): [string, ExpansionSource[]] => [`only ${s}`, [s]]),
];
try {
  for (const [name, sources] of variants) {
    const started = performance.now();
    const rows = await collectRows(index, questions, { ...DEFAULT_SEARCH_TUNING, expansionSources: sources });
    const msPerQuery = (performance.now() - started) / questions.length;
    let total = 0;
    for (let k = 0; k < FOLDS; k++) {
      const train = rows.filter((_, i) => i % FOLDS !== k);
      const held = rows.filter((_, i) => i % FOLDS === k);
      const all = train.flatMap((r) => r.features);
      const mean = FEATURES.map((_, i) => all.reduce((s, f) => s + f[i]!, 0) / all.length);
      const scale = FEATURES.map((_, i) => Math.sqrt(all.reduce((s, f) => s + (f[i]! - mean[i]!) ** 2, 0) / all.length) || 1);
      total += rerankedNdcg(held, { features: FEATURES, mean, scale, weights: fitWeights(train, mean, scale, LAMBDA) }, index) * held.length;
    }
    console.log(`| ${name} | ${(total / rows.length).toFixed(3)} | ${msPerQuery.toFixed(1)} ms |`);
  }
} finally {
  index.close();
}
