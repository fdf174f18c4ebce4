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
  // The window of SNIPPET_TOKENS tokens whose distinct matched stems weigh most.
  let bestStart = 0;
  let bestWeight = -1;
  for (let i = 0; i < tokens.length; i++) {
    if (!weightOf.has(tokens[i]!.stem)) continue;
    const distinct = new Set<string>();
    for (let j = i; j < Math.min(tokens.length, i + SNIPPET_TOKENS); j++) if (weightOf.has(tokens[j]!.stem)) distinct.add(tokens[j]!.stem);
    const weight = [...distinct].reduce((sum, s) => sum + weightOf.get(s)!, 0);
    if (weight > bestWeight) {
      bestWeight = weight;
      bestStart = i;
    }
  }
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
