import { chunkBlocks, type StructureBlock } from "../search/corpus/structure";

/**
 * Cuts extracted page texts into passages by the index's one chunking policy (the corpus's
 * window code and sizes in search/corpus/structure.ts): each page is a block whose lines are
 * its sentences. Passages never cross a page, so each cites exactly one page (`policy.pdf#page=4`).
 */
export interface DocumentChunk {
  text: string;
  citationPath: string;
  position: number;
}

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

/**
 * A run of characters without a space longer than this (dotted leaders in a table of
 * contents, a broken text layer) is cut into pieces of this size, so no passage outgrows
 * PASSAGE_WORDS_MAX such pieces.
 */
export const WORD_CHARS_MAX = 64;

const LONG_WORD = new RegExp(`\\S{${WORD_CHARS_MAX + 1},}`, "g");
const PIECE = new RegExp(`\\S{1,${WORD_CHARS_MAX}}`, "g");

export function chunkPages(filename: string, pageTexts: readonly string[]): DocumentChunk[] {
  const chunks: DocumentChunk[] = [];
  pageTexts.forEach((raw, index) => {
    const block = pageBlock(`${filename}#page=${index + 1}`, normalisePageText(raw));
    // One page at a time: the policy merges short neighbours of one parent, and pages must stay apart.
    for (const passage of chunkBlocks([block])) {
      // Lines come back joined by "\n"; on a page they were sentences of one line of text.
      chunks.push({ text: passage.text.replace(/\n/g, " "), citationPath: passage.citationPath, position: chunks.length });
    }
  });
  return chunks;
}

/** A page as a structure block: its citation as the one path segment, its sentences as lines. */
export function pageBlock(citationPath: string, text: string): StructureBlock {
  const words = text.replace(LONG_WORD, (run) => run.match(PIECE)!.join(" "));
  const sentences = words === "" ? [] : words.split(/(?<=[.;:?!])\s+/);
  return { path: [citationPath], heading: "", lines: sentences.map((sentence) => ({ text: sentence })) };
}
