/**
 * Tokens as the FTS5 index sees them ("porter unicode61 remove_diacritics 2"): runs of
 * letters and digits, lower-cased, diacritics removed, then Porter-stemmed. The ranker
 * counts query terms in candidate passages with these, and reads their statistics from
 * the FTS index by the same stems.
 */
import { porterStem } from "./porter";

const TOKEN = /[\p{L}\p{N}]+/gu;
const MARKS = /\p{M}/gu;
/** Distinct words remembered with their stems; past this the memo starts over (bounded memory). */
const STEM_MEMO_ENTRIES_MAX = 200_000;
const memo = new Map<string, string>();

/** Lower-cased, diacritic-free word runs of `text`, in order. */
export function wordTokens(text: string): string[] {
  const folded = text.normalize("NFKD").replace(MARKS, "").toLowerCase();
  return folded.match(TOKEN) ?? [];
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
  return wordTokens(text).map(stemOf);
}
