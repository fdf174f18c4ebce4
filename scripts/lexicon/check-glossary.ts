/**
 * Checks data/lexicon/glossary.tsv (plain-language <-> legal glossary used for query expansion).
 *
 * Fails (exit 1, listing the offending lines) when a data line
 *   - does not have exactly three tab-separated, non-empty columns (plain, legal, source),
 *   - has a legal term that does not occur in the corpus text or headings
 *     (case-insensitive, whole words, allowing a trailing s/es/d/ed/ing variation),
 *   - has a plain or legal term that is not lower case, or a legal term longer than 4 words,
 *   - repeats a (plain, legal) pair already listed.
 * Prints the number of lines and of distinct plain and legal terms.
 *
 * Usage: bun scripts/lexicon/check-glossary.ts [GLOSSARY_TSV] [PASSAGES_JSONL]
 */
import { join, resolve } from "node:path";

const glossaryPath = resolve(process.argv[2] ?? join(import.meta.dir, "../../data/lexicon/glossary.tsv"));
const corpusPath = resolve(process.argv[3] ?? join(import.meta.dir, "../../data/corpus/passages.jsonl"));

/** Lower-cases, folds typographic quotes to ASCII and collapses whitespace. */
function normalise(s: string): string {
  return s
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/\s+/g, " ")
    .toLowerCase();
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

const SUFFIXES = ["ing", "es", "ed", "s"];

/** Whole-word pattern for a term, tolerating a trailing s/es/d/ed/ing on the term or the corpus word. */
function termPattern(term: string): RegExp {
  const t = normalise(term.trim());
  const stems = new Set([t]);
  for (const suffix of SUFFIXES) {
    if (t.endsWith(suffix) && t.length - suffix.length >= 3) stems.add(t.slice(0, -suffix.length));
  }
  const alternatives = [...stems].sort((a, b) => b.length - a.length).map(escapeRegExp).join("|");
  return new RegExp(`(?<![a-z0-9])(?:${alternatives})(?:s|es|d|ed|ing)?(?![a-z0-9])`);
}

interface Passage {
  heading?: string;
  text?: string;
}

const corpusText = (await Bun.file(corpusPath).text())
  .split("\n")
  .filter((line) => line.trim() !== "")
  .map((line) => {
    const p = JSON.parse(line) as Passage;
    return normalise(`${p.heading ?? ""}\n${p.text ?? ""}`);
  })
  .join("\n");

const problems: string[] = [];
const plains = new Set<string>();
const legals = new Set<string>();
const pairs = new Set<string>();
const foundCache = new Map<string, boolean>();
let dataLines = 0;

const lines = (await Bun.file(glossaryPath).text()).split(/\r?\n/);
lines.forEach((raw, index) => {
  if (raw.trim() === "" || raw.startsWith("#")) return;
  dataLines++;
  const where = `line ${index + 1}: ${raw}`;
  const cols = raw.split("\t");
  if (cols.length !== 3 || cols.some((c) => c.trim() === "")) {
    const empty = cols.filter((c) => c.trim() === "").length;
    problems.push(`${where}\n    -> expected exactly 3 non-empty tab-separated columns, got ${cols.length} (${empty} empty)`);
    return;
  }
  const [plain, legal, source] = cols.map((c) => c.trim()) as [string, string, string];
  if (source === "") problems.push(`${where}\n    -> empty source`);
  if (plain !== plain.toLowerCase()) problems.push(`${where}\n    -> plain term is not lower case`);
  if (legal !== legal.toLowerCase()) problems.push(`${where}\n    -> legal term is not lower case`);
  const words = legal.split(/\s+/).length;
  if (words > 4) problems.push(`${where}\n    -> legal term has ${words} words (at most 4)`);
  const key = `${plain}\t${legal}`;
  if (pairs.has(key)) problems.push(`${where}\n    -> duplicate (plain, legal) pair`);
  pairs.add(key);
  let found = foundCache.get(legal);
  if (found === undefined) {
    found = termPattern(legal).test(corpusText);
    foundCache.set(legal, found);
  }
  if (!found) problems.push(`${where}\n    -> legal term "${legal}" does not occur in the corpus text or headings`);
  plains.add(plain);
  legals.add(legal);
});

console.log(`${glossaryPath}: ${dataLines} lines, ${plains.size} distinct plain terms, ${legals.size} distinct legal terms`);
if (problems.length > 0) {
  console.error(`${problems.length} problem(s):\n${problems.join("\n")}`);
  process.exit(1);
}
console.log("OK");
