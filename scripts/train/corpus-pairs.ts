/**
 * Training pairs mined from the corpus's own structure: nothing here is a judged question,
 * and every pair teaches words, never a passage (the model has no per-passage parameters).
 */
import { citationKeysOfPath, citationsInQuery } from "../../src/search/citations.ts";
import { sentencesOf } from "../distil/corpus.ts";
import { embeddingText, type Corpus, type Passage } from "./passages.ts";

/** `key` names what `doc` is about: two pairs with one key are not each other's negatives. */
export type Pair = { kind: string; query: string; doc: string; key: string };

/** Passages one cross-reference may pair with ("Article 6" spans several passages). */
const REFERENCE_TARGETS_MAX = 3;
const SENTENCE_CHARS_MIN = 40;
const SENTENCE_CHARS_MAX = 300;
const DEFINITION_CHARS_MIN = 20;

const CHAPTER = /\s*\(CHAPTER [IVXLC]+\s*—\s*([^)]+)\)\s*$/;
/** Citation-like heading parts: "Article 33", "§ 1003.4", "Ga. Code Ann. § 10-1-914", "4(a)(1)". */
const CITATION_PART = /^(?:Article \d+\w?|Official Staff Commentary|Staff Commentary|.*§\s*[\w.:-]+|Appendix [A-Z] to Part \d+|\d+\([\w()]+\)[\w()]*)$/;

/** The provision's own title without citations, chapter or "(Regulation C)": "Notification of a personal data breach …". */
export function titleOf(heading: string): string | undefined {
  const parts = heading
    .replace(CHAPTER, "")
    .split(/\s*—\s*/)
    .map((s) =>
      s
        .replace(/^§\s*[\d.]+\s*/, "")
        .replace(/\(Regulation C\)/, "")
        .replace(/^(?:[IVX]+|[A-Z])\.\s+/, "")
        .trim(),
    )
    .filter((s) => !CITATION_PART.test(s) && /[a-z]{3}/.test(s));
  return parts.length === 0 ? undefined : parts.join("; ");
}

function chapterOf(heading: string): string | undefined {
  return CHAPTER.exec(heading)?.[1]?.trim();
}

const QUOTED_DEFINITION = /[‘'"“]([^’'"”\n]{3,80})[’'"”],?\s+(?:means|includes|shall mean|refers to)\b\s*:?\s*([^\n]+)/g;
const LEADING_DEFINITION = /^(?:\(\w+\)\s*)?([A-Z][\w -]{2,60}?) means\b\s*:?\s*([^\n]+)/gm;

function definitionsIn(text: string): { term: string; definition: string }[] {
  const out: { term: string; definition: string }[] = [];
  for (const pattern of [QUOTED_DEFINITION, LEADING_DEFINITION]) {
    for (const m of text.matchAll(pattern)) {
      const definition = m[2]!.trim();
      if (definition.length >= DEFINITION_CHARS_MIN) out.push({ term: m[1]!.trim(), definition });
    }
  }
  return out;
}

export function mineCorpusPairs(corpus: Corpus): Pair[] {
  const { passages } = corpus;
  const pairs: Pair[] = [];
  const full = (p: Passage) => embeddingText(corpus, p);
  const byKey = new Map<string, Passage[]>();
  for (const p of passages) {
    for (const k of citationKeysOfPath(p.citationPath)) byKey.set(k, [...(byKey.get(k) ?? []), p]);
  }

  passages.forEach((p, i) => {
    const title = titleOf(p.heading);
    if (title !== undefined) pairs.push({ kind: "title", query: title, doc: embeddingText(corpus, { ...p, heading: "" }), key: `title:${title}` });
    const chapter = chapterOf(p.heading);
    if (chapter !== undefined) pairs.push({ kind: "chapter", query: chapter, doc: full(p), key: `chapter:${chapter}` });

    for (const { term, definition } of definitionsIn(p.text)) {
      pairs.push({ kind: "definition", query: term, doc: definition, key: `term:${term.toLowerCase()}` });
    }

    const next = passages[i + 1];
    if (next !== undefined && next.document === p.document) {
      pairs.push({ kind: "neighbour", query: full(p), doc: full(next), key: `next:${next.citationPath}` });
    }

    const sentences = sentencesOf(p.text, SENTENCE_CHARS_MIN, SENTENCE_CHARS_MAX);
    for (const sentence of sentences) {
      // The inverse cloze task: a sentence finds the passage it was taken from.
      if (sentences.length > 1) {
        const rest = p.text.replace(sentence, " ");
        pairs.push({ kind: "sentence", query: sentence, doc: full({ ...p, text: rest }), key: `passage:${p.citationPath}` });
      }
      for (const citation of citationsInQuery(sentence)) {
        const key = [...citation.keys].reverse().find((k) => byKey.has(k));
        if (key === undefined) continue;
        const targets = byKey.get(key)!.filter((t) => t !== p).slice(0, REFERENCE_TARGETS_MAX);
        for (const t of targets) {
          pairs.push({ kind: "citation", query: citationText(key), doc: full(t), key: `passage:${t.citationPath}` });
          pairs.push({ kind: "reference", query: sentence, doc: full(t), key: `passage:${t.citationPath}` });
        }
      }
    }
  });
  return dedupe(pairs);
}

/** "article 33(1)" → "Article 33(1)"; "1003.4(a)" → "§ 1003.4(a)": how a reader would cite it. */
function citationText(key: string): string {
  return key.startsWith("article ") ? `Article ${key.slice(8)}` : `§ ${key}`;
}

function dedupe(pairs: Pair[]): Pair[] {
  const seen = new Set<string>();
  return pairs.filter((p) => {
    const id = `${p.kind}\u0000${p.query}\u0000${p.doc}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
