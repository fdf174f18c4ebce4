/**
 * Tokens as the FTS5 index sees them ("porter unicode61 remove_diacritics 2"): runs of
 * letters and digits, lower-cased, diacritics removed, then Porter-stemmed. The ranker
 * counts query terms in candidate passages with these, and reads their statistics from
 * the FTS index by the same stems.
 */
import { porterStem } from "./porter";

const LETTER_OR_DIGIT = /[\p{L}\p{N}\p{M}]/u;
const MARKS = /\p{M}/gu;
/** Distinct words remembered with their stems; past this the memo starts over (bounded memory). */
const STEM_MEMO_ENTRIES_MAX = 200_000;
const memo = new Map<string, string>();

function isTokenChar(code: number, text: string, i: number): boolean {
  if (code < 128) return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
  return LETTER_OR_DIGIT.test(text[i]!);
}

/**
 * Lower-cased, diacritic-free word runs of `text`, in order. A scan by character code (the
 * ranker tokenises every candidate passage, so this is on the search path); only words
 * with non-ASCII characters go through Unicode normalisation.
 */
export function wordTokens(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  let ascii = true;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? text.charCodeAt(i) : 32;
    if (i < text.length && isTokenChar(code, text, i)) {
      if (start < 0) {
        start = i;
        ascii = true;
      }
      if (code >= 128) ascii = false;
      continue;
    }
    if (start < 0) continue;
    const raw = text.slice(start, i);
    start = -1;
    if (ascii) {
      out.push(raw.toLowerCase());
      continue;
    }
    // Decomposing may turn one run into several (a ligature, a symbol); re-split what is left.
    const folded = raw.normalize("NFKD").replace(MARKS, "").toLowerCase();
    for (const part of folded.split(/[^\p{L}\p{N}]+/u)) if (part !== "") out.push(part);
  }
  return out;
}

export function stemOf(word: string): string {
  let s = memo.get(word);
  if (s === undefined) {
    s = porterStem(word);
    if (memo.size >= STEM_MEMO_ENTRIES_MAX) memo.clear();
    memo.set(word, s);
  }
  return s;
}

/** The FTS5 terms of `text`, in order. */
export function termsOf(text: string): string[] {
  const words = wordTokens(text);
  for (let i = 0; i < words.length; i++) words[i] = stemOf(words[i]!);
  return words;
}
