/**
 * The plain-language rule of the judged questions: a question in that category shares at
 * most one content word (stemmed, stop words left out) with each passage that answers it.
 *
 *   bun test/search-quality/shared-words.ts "question text" "exact citationPath" ...
 */
import { stem, wordsOf } from "../../src/search/embedder/tokens";

/** Function words and question words: they carry no topic, so sharing them is no clue. */
const STOP = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before being below between both but by can " +
    "could did do does doing down during each either else ever every few for from further had has have having he her here hers him his " +
    "how i if in into is it its itself just may me might more most must my myself neither no nor not now of off on once only or other " +
    "ought our ours out over own per same shall she should so some such than that the their theirs them then there these they this " +
    "those through to too under until up upon us very was we were what when where whether which while who whom whose why will with " +
    "within without would yet you your yours get got gets let lets s t don doesn isn aren wasn weren won can't cannot someone something " +
    "anyone anything one ones thing things need needs like"
  ).split(" "),
);

export function contentStems(text: string): Set<string> {
  return new Set(wordsOf(text).filter((w) => !STOP.has(w) && w.length > 1).map(stem));
}

/** Content stems the question shares with the passage text (heading and citation path included). */
export function sharedContentWords(question: string, passage: { text: string; heading?: string; citationPath?: string }): string[] {
  const passageStems = contentStems([passage.citationPath ?? "", passage.heading ?? "", passage.text].join(" "));
  return [...contentStems(question)].filter((s) => passageStems.has(s));
}

if (import.meta.main) {
  const [question, ...paths] = process.argv.slice(2);
  if (question === undefined || paths.length === 0) {
    console.error('usage: bun test/search-quality/shared-words.ts "question" "citationPath" ...');
    process.exit(2);
  }
  const text = await Bun.file(new URL("../../data/corpus/passages.jsonl", import.meta.url)).text();
  const passages = text.trim().split("\n").map((l) => JSON.parse(l) as { citationPath: string; heading: string; text: string });
  for (const path of paths) {
    const matches = passages.filter((p) => p.citationPath === path);
    if (matches.length === 0) console.log(`${path}: no such passage`);
    for (const p of matches) {
      const shared = sharedContentWords(question, p);
      console.log(`${path}: ${shared.length} shared [${shared.join(", ")}]${shared.length <= 1 ? "" : "  ← too many for plain language"}`);
    }
  }
}
