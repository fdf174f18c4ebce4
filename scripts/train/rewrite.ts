/**
 * Everyday rewrites of the corpus's own sentences and titles: statute words swapped for the
 * plain words the bridges pair them with ("notify" → "tell", "supervisory authority" →
 * "regulator"), each rewrite paired with the passage its original came from. This teaches
 * the bridges in context, the way people actually ask.
 */
import { stem, wordsOf } from "../../src/search/embedder/tokens.ts";
import type { Pair } from "./corpus-pairs.ts";
import type { Rng } from "./rng.ts";

export type Substitutions = {
  /** Stem of a statute word → plain alternatives. */
  words: Map<string, string[]>;
  /** Lower-case statute phrase (two or more words) → plain alternatives. */
  phrases: Map<string, string[]>;
};

/** Turns bridge pairs (query = everyday side, doc = statute side) into substitutions. */
export function substitutionsOf(bridges: readonly Pair[]): Substitutions {
  const words = new Map<string, string[]>();
  const phrases = new Map<string, string[]>();
  for (const { query, doc } of bridges) {
    const docWords = wordsOf(doc);
    if (docWords.length === 0) continue;
    if (docWords.length === 1) {
      const key = stem(docWords[0]!);
      words.set(key, [...(words.get(key) ?? []), query]);
    } else {
      const key = docWords.join(" ");
      phrases.set(key, [...(phrases.get(key) ?? []), query]);
    }
  }
  return { words, phrases };
}

const WORD_OR_GAP = /([\p{L}\p{N}]+)|([^\p{L}\p{N}]+)/gu;

/** One rewrite of `text`, each substitutable word or phrase swapped with probability `rate`; undefined if nothing was. */
export function rewrite(text: string, subs: Substitutions, rate: number, rng: Rng): string | undefined {
  let swapped = 0;
  let out = text;
  for (const [phrase, alternatives] of subs.phrases) {
    if (!out.toLowerCase().includes(phrase)) continue;
    out = out.replace(new RegExp(`\\b${phrase.replace(/ /g, "\\W+")}\\b`, "gi"), (m) => {
      if (rng.next() >= rate) return m;
      swapped++;
      return alternatives[rng.below(alternatives.length)]!;
    });
  }
  out = out.replace(WORD_OR_GAP, (m, word: string | undefined) => {
    if (word === undefined) return m;
    const alternatives = subs.words.get(stem(word.toLowerCase()));
    if (alternatives === undefined || rng.next() >= rate) return m;
    swapped++;
    return alternatives[rng.below(alternatives.length)]!;
  });
  return swapped === 0 ? undefined : out;
}

/** A rewrite of each sentence and title query, paired with the same passage. */
export function rewritePairs(sources: readonly Pair[], subs: Substitutions, rate: number, rng: Rng): Pair[] {
  return sources.flatMap((p) => {
    const query = rewrite(p.query, subs, rate, rng);
    return query === undefined ? [] : [{ kind: "rewrite", query, doc: p.doc, key: p.key }];
  });
}
