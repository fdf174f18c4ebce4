/**
 * The vocabulary bridge: a query word or phrase expands to weighted alternatives that the
 * statutes use ("sue" → "compensation", "ip address" → "online identifier"). The data is
 * built by scripts/build-lexicon.ts from WordNet, pretrained word vectors, the corpus's
 * definition clauses and the reviewed glossary, and travels inside the binary.
 */
import lexiconPath from "../../data/lexicon/expansions.tsv" with { type: "file" };
import { readAssetText } from "../platform/assets";
import { stemOf, wordTokens } from "./text/tokens";

export const EXPANSION_SOURCES = ["wordnet-synonym", "wordnet-derivation", "vectors", "definition", "glossary"] as const;
export type ExpansionSource = (typeof EXPANSION_SOURCES)[number];

export interface Expansion {
  /** As written in the corpus ("online identifier"): what the FTS query asks for. */
  text: string;
  /** Its FTS terms (Porter stems), in order. */
  terms: string[];
  /** 0..1, relative to the user's own word (1). */
  weight: number;
  source: ExpansionSource;
}

/** Longest query phrase looked up, in words ("right to be forgotten"). */
const PHRASE_WORDS_MAX = 4;
/** Expansions one query keeps, best first: bounds the FTS query and the scoring work. */
export const QUERY_EXPANSIONS_MAX = 24;

export class Lexicon {
  private constructor(private readonly entries: Map<string, Expansion[]>) {}

  static parse(tsv: string): Lexicon {
    const entries = new Map<string, Expansion[]>();
    for (const line of tsv.split("\n")) {
      if (line === "" || line.startsWith("#")) continue;
      const [key, text, weight, source] = line.split("\t");
      if (key === undefined || text === undefined || !(EXPANSION_SOURCES as readonly string[]).includes(source ?? "")) continue;
      const list = entries.get(key) ?? [];
      list.push({ text, terms: wordTokens(text).map(stemOf), weight: Number(weight), source: source as ExpansionSource });
      entries.set(key, list);
    }
    return new Lexicon(entries);
  }

  /** The lexicon shipped inside the binary (data/lexicon/expansions.tsv). */
  static async load(path: string = lexiconPath): Promise<Lexicon> {
    return Lexicon.parse(await readAssetText(path));
  }

  get size(): number {
    return this.entries.size;
  }

  /**
   * Expansions of every word and phrase of the query (`words`: its tokens in order), the
   * strongest per expansion term, leaving out what the query already says. `sources`
   * limits which sources count (for measuring each one).
   */
  expand(words: readonly string[], sources: ReadonlySet<ExpansionSource> = new Set(EXPANSION_SOURCES)): Expansion[] {
    const stems = words.map(stemOf);
    const own = new Set(stems);
    const best = new Map<string, Expansion>();
    for (let n = PHRASE_WORDS_MAX; n >= 1; n--) {
      for (let i = 0; i + n <= stems.length; i++) {
        for (const e of this.entries.get(stems.slice(i, i + n).join(" ")) ?? []) {
          if (!sources.has(e.source) || e.terms.every((t) => own.has(t))) continue;
          const key = e.terms.join(" ");
          const seen = best.get(key);
          if (seen === undefined || e.weight > seen.weight) best.set(key, e);
        }
      }
    }
    return [...best.values()].sort((a, b) => b.weight - a.weight || (a.text < b.text ? -1 : 1)).slice(0, QUERY_EXPANSIONS_MAX);
  }
}
