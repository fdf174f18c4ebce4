import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Bytes read per corpus file: the largest real file is ~350 KB. */
const CORPUS_FILE_BYTES_MAX = 20_000_000;

export type CorpusDocument = { name: string; text: string };

function readText(path: string): string {
  const text = readFileSync(path, "utf8");
  if (text.length > CORPUS_FILE_BYTES_MAX) throw new Error(`${path} is larger than ${CORPUS_FILE_BYTES_MAX} bytes`);
  return text;
}

/** Formex XML to plain text: each element boundary becomes a line break. */
function formexToText(xml: string): string {
  return xml
    .replace(/<[^>]+>/g, "\n")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/[ \t]+/g, " ")
    .replace(/\n\s*\n+/g, "\n");
}

/**
 * The plain text of the shared regulatory corpus (see SOURCES.md): GDPR, 12 CFR 1003 and the
 * state breach statutes. The PDFs repeat statutes already present as text, so they are skipped.
 */
export function readCorpusDocuments(corpusDir: string): CorpusDocument[] {
  const docs: CorpusDocument[] = [
    { name: "eu-gdpr", text: formexToText(readText(join(corpusDir, "eu-gdpr", "gdpr-consolidated-en.xml"))) },
    { name: "us-cfr-hmda", text: readText(join(corpusDir, "us-cfr-hmda", "hmda_reg_c_12cfr1003.txt")) },
  ];
  const stateDir = join(corpusDir, "us-state-breach");
  for (const file of readdirSync(stateDir).sort()) {
    if (file.endsWith(".txt")) docs.push({ name: `us-state-breach/${file}`, text: readText(join(stateDir, file)) });
  }
  return docs;
}

/** Sentences of `text` between `charsMin` and `charsMax` long (longer ones are cut at a word). */
export function sentencesOf(text: string, charsMin: number, charsMax: number): string[] {
  const out: string[] = [];
  for (const raw of text.split(/(?<=[.;:])\s+|\n+/)) {
    let sentence = raw.replace(/\s+/g, " ").trim();
    while (sentence.length > charsMax) {
      const cut = sentence.lastIndexOf(" ", charsMax);
      const at = cut > charsMin ? cut : charsMax;
      out.push(sentence.slice(0, at));
      sentence = sentence.slice(at).trim();
    }
    if (sentence.length >= charsMin) out.push(sentence);
  }
  return out;
}
