/**
 * Definition clauses in legal text: "'personal data' means …", "(5) \"Breach of the
 * security of the system\" means …", "Application means an oral or written request …".
 * Found at query time in candidate passages (so an uploaded policy's definitions count as
 * much as the corpus's) and at build time for the lexicon.
 */

export interface Definition {
  /** The defined term, lower case. */
  term: string;
  /** The clause that defines it, up to the end of its sentence. */
  definition: string;
}

const QUOTED = /[‘'"“]([^'"“”’‘\n]{2,80})[’'"”],?\s+(?:means|includes|shall mean|has the meaning|refers to)\b/g;
/** Unquoted, at the start of a line or point: "Application means", "(b) Dwelling means". */
const LEADING = /(?:^|\n)(?:\(\w{1,4}\)\s*|\d{1,2}\.\s*)?([A-Z][a-z]+(?:[ -][a-zA-Z]+){0,5})\s+(?:means|includes)\b/g;
/** Characters of definition text kept after the term: the first sentence or so. */
const DEFINITION_CHARS_MAX = 400;
/** Definitions read from one passage: a definitions section lists a few dozen at most. */
const DEFINITIONS_PER_TEXT_MAX = 64;

/** Every definition clause has one of these words; most passages have none, and skip the patterns. */
const DEFINING_WORD = /\b(?:means|includes|shall mean|has the meaning|refers to)\b/;

export function definitionsIn(text: string): Definition[] {
  const found: Definition[] = [];
  if (!DEFINING_WORD.test(text)) return found;
  for (const pattern of [QUOTED, LEADING]) {
    for (const m of text.matchAll(pattern)) {
      const term = m[1]!.trim().toLowerCase();
      if (term.split(/\s+/).length > 8 || found.some((d) => d.term === term)) continue;
      const rest = text.slice(m.index! + m[0].length, m.index! + m[0].length + DEFINITION_CHARS_MAX);
      found.push({ term, definition: rest.split(/(?<=[.;])\s/)[0]!.trim() });
      if (found.length >= DEFINITIONS_PER_TEXT_MAX) return found;
    }
  }
  return found;
}
