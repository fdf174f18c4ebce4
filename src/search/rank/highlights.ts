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

const WORD_CHAR = /[\p{L}\p{N}]/u;
const MARKS = /\p{M}/gu;
/** Tokens in the snippet window, and its length bound in characters. */
const SNIPPET_TOKENS = 32;
const SNIPPET_CHARS_MAX = 300;
const TERMS_MAX = 12;
const WEIGHT_EPSILON = 1e-9;

/** A passage's words: maximal runs of letters and digits, where each sits and its FTS term. */
interface Tokens {
  starts: Int32Array;
  ends: Int32Array;
  stems: string[];
}

/**
 * Tokens by the text they are of: the same passages come back in reply after reply, and
 * tokenising them was a third of materialising a reply. Bounded by an estimate of what the
 * entries hold (the text at 2 bytes a character, 16 bytes a token, the stems themselves being
 * shared with the stemmer's memo): past it the cache starts over, as FieldCache does.
 */
const TOKENS_CACHE_BYTES_MAX = 8 * 1024 * 1024;
const tokensCache = new Map<string, Tokens>();
let tokensCacheBytes = 0;

function cachedTokensOf(content: string): Tokens {
  let tokens = tokensCache.get(content);
  if (tokens === undefined) {
    tokens = tokensOf(content);
    const bytes = 2 * content.length + 16 * tokens.stems.length;
    if (tokensCacheBytes + bytes > TOKENS_CACHE_BYTES_MAX) {
      tokensCache.clear();
      tokensCacheBytes = 0;
    }
    tokensCache.set(content, tokens);
    tokensCacheBytes += bytes;
  }
  return tokens;
}

/**
 * The runs /[\p{L}\p{N}]+/gu matches, found by character code (this runs on every match of
 * every reply): only a character outside ASCII is tested against the Unicode classes, and
 * only a word holding one goes through Unicode normalisation.
 */
function tokensOf(content: string): Tokens {
  const starts: number[] = [];
  const ends: number[] = [];
  const stems: string[] = [];
  let start = -1;
  let ascii = true;
  let upper = false;
  for (let i = 0, width = 1; i <= content.length; i += width) {
    const code = i < content.length ? content.charCodeAt(i) : 32;
    let inWord: boolean;
    width = 1;
    if (code < 128) inWord = (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
    else {
      const point = content.codePointAt(i)!;
      width = point > 0xffff ? 2 : 1;
      inWord = WORD_CHAR.test(String.fromCodePoint(point));
    }
    if (inWord) {
      if (start < 0) {
        start = i;
        ascii = true;
        upper = false;
      }
      if (code >= 128) ascii = false;
      else if (code >= 65 && code <= 90) upper = true;
    } else if (start >= 0) {
      const word = content.slice(start, i);
      const folded = ascii ? (upper ? word.toLowerCase() : word) : word.normalize("NFKD").replace(MARKS, "").toLowerCase();
      starts.push(start);
      ends.push(i);
      stems.push(stemOf(folded));
      start = -1;
    }
  }
  return { starts: Int32Array.from(starts), ends: Int32Array.from(ends), stems };
}

export function highlightsOf(content: string, queryStems: readonly string[], expansions: readonly Expansion[]): Highlights {
  const weightOf = new Map<string, number>();
  for (const e of expansions) for (const t of e.terms) weightOf.set(t, Math.max(weightOf.get(t) ?? 0, e.weight / 2));
  for (const s of queryStems) weightOf.set(s, 1);
  const { starts, ends, stems } = cachedTokensOf(content);
  const terms: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < stems.length; i++) {
    if (!weightOf.has(stems[i]!)) continue;
    const word = content.slice(starts[i], ends[i]);
    if (seen.has(word.toLowerCase())) continue;
    seen.add(word.toLowerCase());
    if (terms.length < TERMS_MAX) terms.push(word);
  }
  const bestStart = heaviestWindow(stems, weightOf);
  if (stems.length === 0) return { terms, snippet: content.slice(0, SNIPPET_CHARS_MAX) };
  // Start a few tokens before the first match for context.
  const first = Math.max(0, bestStart - 4);
  const last = Math.min(stems.length, first + SNIPPET_TOKENS) - 1;
  let from = starts[first]!;
  let to = Math.min(ends[last]!, from + SNIPPET_CHARS_MAX);
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
function heaviestWindow(stems: readonly string[], weightOf: ReadonlyMap<string, number>): number {
  const matched: number[] = [];
  for (let i = 0; i < stems.length; i++) if (weightOf.has(stems[i]!)) matched.push(i);
  const inWindow = new Map<string, number>();
  let bestStart = 0;
  let bestWeight = -1;
  let weight = 0;
  let end = 0;
  for (let m = 0; m < matched.length; m++) {
    const start = matched[m]!;
    for (; end < matched.length && matched[end]! < start + SNIPPET_TOKENS; end++) {
      const stem = stems[matched[end]!]!;
      const n = inWindow.get(stem) ?? 0;
      if (n === 0) weight += weightOf.get(stem)!;
      inWindow.set(stem, n + 1);
    }
    // Sums kept by adding and taking away drift in the last bits: equal windows stay equal.
    if (weight > bestWeight + WEIGHT_EPSILON) {
      bestWeight = weight;
      bestStart = start;
    }
    const leaving = stems[start]!;
    const n = inWindow.get(leaving)!;
    if (n === 1) {
      inWindow.delete(leaving);
      weight -= weightOf.get(leaving)!;
    } else inWindow.set(leaving, n - 1);
  }
  return bestStart;
}
