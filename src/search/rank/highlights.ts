/**
 * Why a passage matched (SearchMatch.highlights): the query words and expansions found in
 * it, as written there, and the short extract where they sit closest together.
 */
import type { Expansion } from "../lexicon";
import { stemOf } from "../text/tokens";

export interface Highlights {
  /** Words of the passage that matched the query or one of its expansions, in order of first appearance. */
  terms: string[];
  /** A short extract around them; "…" marks a cut. */
  snippet: string;
}

const TOKEN = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}/gu;
const NON_ASCII = /[^\x00-\x7f]/;
/** Tokens in the snippet window, and its length bound in characters. */
const SNIPPET_TOKENS = 32;
const SNIPPET_CHARS_MAX = 300;
const TERMS_MAX = 12;
const WEIGHT_EPSILON = 1e-9;

export function highlightsOf(content: string, queryStems: readonly string[], expansions: readonly Expansion[]): Highlights {
  const weightOf = new Map<string, number>();
  for (const e of expansions) for (const t of e.terms) weightOf.set(t, Math.max(weightOf.get(t) ?? 0, e.weight / 2));
  for (const s of queryStems) weightOf.set(s, 1);
  const tokens: { start: number; end: number; stem: string; word: string }[] = [];
  for (const m of content.matchAll(TOKEN)) {
    const word = m[0];
    // Only a word with non-ASCII characters can change under Unicode normalisation (the costly part).
    const folded = NON_ASCII.test(word) ? word.normalize("NFKD").replace(MARKS, "").toLowerCase() : word.toLowerCase();
    tokens.push({ start: m.index!, end: m.index! + word.length, stem: stemOf(folded), word });
  }
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const t of tokens) {
    if (!weightOf.has(t.stem) || seen.has(t.word.toLowerCase())) continue;
    seen.add(t.word.toLowerCase());
    if (terms.length < TERMS_MAX) terms.push(t.word);
  }
  const bestStart = heaviestWindow(tokens, weightOf);
  if (tokens.length === 0) return { terms, snippet: content.slice(0, SNIPPET_CHARS_MAX) };
  // Start a few tokens before the first match for context.
  const first = Math.max(0, bestStart - 4);
  const last = Math.min(tokens.length, first + SNIPPET_TOKENS) - 1;
  let from = tokens[first]!.start;
  let to = Math.min(tokens[last]!.end, from + SNIPPET_CHARS_MAX);
  const sentenceStart = content.lastIndexOf("\n", from);
  if (sentenceStart >= 0 && from - sentenceStart < 40) from = sentenceStart + 1;
  const text = content.slice(from, to).replace(/\s+/g, " ").trim();
  return { terms, snippet: `${from > 0 ? "…" : ""}${text}${to < content.length ? "…" : ""}` };
}

/**
 * The window of SNIPPET_TOKENS tokens, starting at a matched token, whose distinct matched
 * stems weigh most (the first of equals). One pass with a sliding count per stem: this runs
 * on every match of every reply.
 */
function heaviestWindow(tokens: readonly { stem: string }[], weightOf: ReadonlyMap<string, number>): number {
  const matched: number[] = [];
  for (let i = 0; i < tokens.length; i++) if (weightOf.has(tokens[i]!.stem)) matched.push(i);
  const inWindow = new Map<string, number>();
  let bestStart = 0;
  let bestWeight = -1;
  let weight = 0;
  let end = 0;
  for (let m = 0; m < matched.length; m++) {
    const start = matched[m]!;
    for (; end < matched.length && matched[end]! < start + SNIPPET_TOKENS; end++) {
      const stem = tokens[matched[end]!]!.stem;
      const n = inWindow.get(stem) ?? 0;
      if (n === 0) weight += weightOf.get(stem)!;
      inWindow.set(stem, n + 1);
    }
    // Sums kept by adding and taking away drift in the last bits: equal windows stay equal.
    if (weight > bestWeight + WEIGHT_EPSILON) {
      bestWeight = weight;
      bestStart = start;
    }
    const leaving = tokens[start]!.stem;
    const n = inWindow.get(leaving)!;
    if (n === 1) {
      inWindow.delete(leaving);
      weight -= weightOf.get(leaving)!;
    } else inWindow.set(leaving, n - 1);
  }
  return bestStart;
}
