/**
 * Splits extracted page texts into passages for the search index. Passages never cross a
 * page, so each cites exactly one page (`policy.pdf#page=4`).
 */
export interface DocumentChunk {
  text: string;
  citationPath: string;
  position: number;
}

/** Passages aim for this size: a few sentences, small enough to embed well. */
export const CHUNK_CHARS_TARGET = 900;
/** Words carried over from the end of one passage into the next so a sentence cut at the edge is still found whole. */
export const CHUNK_OVERLAP_CHARS = 150;
/** A dense page of legal text is ~8,000 characters; text past this on one page is not indexed. */
export const PAGE_CHARS_MAX = 50_000;

// Zero-width spaces and joiners, byte-order marks and soft hyphens: producers (e.g. XEP)
// scatter them through words, where they would split search terms.
const INVISIBLE = /[\u200b-\u200d\u2060\ufeff\u00ad]/g;

// A lower-case word split by a hyphen at the end of a line ("sec-\ntion"): typeset text
// (two-column statutes) breaks words this way, and search needs the word whole.
const LINE_END_HYPHENATION = /(\p{Ll})-[ \t]*\n\s*(\p{Ll})/gu;

/** Plain text on one line: invisible characters dropped, hyphenated line breaks joined, whitespace collapsed. */
export function normalisePageText(text: string): string {
  return text.replace(INVISIBLE, "").replace(LINE_END_HYPHENATION, "$1$2").replace(/\s+/g, " ").trim().slice(0, PAGE_CHARS_MAX);
}

export function chunkPages(filename: string, pageTexts: readonly string[]): DocumentChunk[] {
  const chunks: DocumentChunk[] = [];
  pageTexts.forEach((raw, index) => {
    const citationPath = `${filename}#page=${index + 1}`;
    for (const text of splitText(normalisePageText(raw))) chunks.push({ text, citationPath, position: chunks.length });
  });
  return chunks;
}

/** Cuts at the last sentence end (else the last space) before the target size, with overlap. */
export function splitText(text: string): string[] {
  if (text === "") return [];
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    if (text.length - start <= CHUNK_CHARS_TARGET) {
      pieces.push(text.slice(start));
      break;
    }
    const limit = start + CHUNK_CHARS_TARGET;
    const window = text.slice(start, limit);
    const sentenceEnd = Math.max(window.lastIndexOf(". "), window.lastIndexOf("; "), window.lastIndexOf(": "));
    const space = window.lastIndexOf(" ");
    // Prefer a sentence boundary unless it would leave a passage under half the target.
    let end = sentenceEnd > CHUNK_CHARS_TARGET / 2 ? start + sentenceEnd + 1 : space > 0 ? start + space : limit;
    if (end <= start) end = limit;
    pieces.push(text.slice(start, end).trim());
    // Step back by the overlap, then forward to a word start, never behind the previous start.
    let next = Math.max(end - CHUNK_OVERLAP_CHARS, start + 1);
    const wordStart = text.indexOf(" ", next);
    next = wordStart >= 0 && wordStart < end ? wordStart + 1 : end;
    start = next;
  }
  return pieces.filter((piece) => piece.length > 0);
}
