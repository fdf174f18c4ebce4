/** The corpus's definition clauses, for the lexicon build (see src/search/rank/definitions.ts). */
import { definitionsIn, type Definition } from "../../src/search/rank/definitions";

export function readCorpusDefinitions(passages: readonly { text: string }[]): Definition[] {
  const seen = new Set<string>();
  return passages.flatMap((p) => definitionsIn(p.text)).filter((d) => {
    const key = `${d.term}\n${d.definition}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
