import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One passage of the shared corpus as data/corpus/passages.jsonl stores it. */
export type Passage = {
  document: string;
  citationPath: string;
  heading: string;
  text: string;
  jurisdictions: string[];
};

export type Corpus = {
  passages: Passage[];
  /** slug → display name (data/corpus/jurisdictions.json). */
  jurisdictionNames: Map<string, string>;
};

export function readCorpus(repoRoot: string): Corpus {
  const dir = join(repoRoot, "data", "corpus");
  const passages = readFileSync(join(dir, "passages.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Passage);
  const names = JSON.parse(readFileSync(join(dir, "jurisdictions.json"), "utf8")) as { slug: string; name: string }[];
  return { passages, jurisdictionNames: new Map(names.map((j) => [j.slug, j.name])) };
}

/** What the product embeds for a passage: `embeddingText` in src/search/service.ts. */
export function embeddingText(corpus: Corpus, p: Pick<Passage, "jurisdictions" | "heading" | "text">): string {
  const where = p.jurisdictions.map((s) => corpus.jurisdictionNames.get(s) ?? s).join(", ");
  return [where, p.heading, p.text].filter((s) => s !== "").join("\n");
}
