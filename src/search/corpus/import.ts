/**
 * Importing passages into the shared knowledge base: the sample corpus shipped inside
 * the binary, a JSONL file of passages, or a folder of .md/.txt/.pdf files described by
 * a manifest. Idempotent: each instrument is diffed by content hash (indexing.indexDocument).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, extname, join, relative, resolve } from "node:path";
import sampleJurisdictions from "../../../data/corpus/jurisdictions.json";
import passagesPath from "../../../data/corpus/passages.jsonl" with { type: "file" };
import { readAssetText } from "../../platform/assets";
import { upsertJurisdiction } from "../../auth/store";
import type { PdfParser } from "../../documents/pdf/parser";
import { indexDocument, type IndexingDeps } from "../indexing";
import { parsePassagesJsonl, type CorpusJurisdiction, type CorpusPassage } from "./passages";
import { chunkBlocks, normaliseSpaces, type StructureBlock } from "./structure";

export interface ImportProgress {
  doneChunks: number;
  totalChunks: number;
}

export interface ImportSummary {
  documents: number;
  jurisdictions: number;
  chunksAdded: number;
  chunksUnchanged: number;
  chunksRemoved: number;
  elapsedMs: number;
}

/** Shared-corpus document ids are namespaced so they can never collide with upload uuids. */
export function corpusDocumentId(key: string): string {
  return `corpus:${key}`;
}

const SLUG = /^[a-z][a-z0-9-]{0,63}$/;

function checkJurisdiction(j: unknown, origin: string): CorpusJurisdiction {
  const v = j as Partial<CorpusJurisdiction>;
  if (typeof v?.slug !== "string" || !SLUG.test(v.slug)) throw new Error(`${origin}: bad jurisdiction slug ${JSON.stringify(v?.slug)}`);
  if (typeof v.name !== "string" || v.name.length < 1 || v.name.length > 200) throw new Error(`${origin}: jurisdiction ${v.slug} needs a name of 1..200 characters`);
  const description = v.description ?? "";
  if (typeof description !== "string" || description.length > 1000) throw new Error(`${origin}: jurisdiction ${v.slug} description must be ≤ 1000 characters`);
  return { slug: v.slug, name: v.name, description };
}

/**
 * Imports passages grouped by their `document`. Jurisdictions listed are upserted first;
 * every passage's jurisdictions must then exist. The index must be ready, and a corpus that
 * grew is clustered by the maintenance after (maintenance.ts; `regkb corpus import` runs both).
 */
export async function importPassages(
  deps: IndexingDeps,
  corpus: { jurisdictions: CorpusJurisdiction[]; passages: CorpusPassage[] },
  onProgress?: (p: ImportProgress) => void,
  nowMs: () => number = () => performance.now(),
): Promise<ImportSummary> {
  const started = nowMs();
  const { db } = deps.searchIndex;
  db.transaction(() => corpus.jurisdictions.forEach((j) => upsertJurisdiction(db, j))).immediate();
  const known = new Set(db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug));
  const unknown = [...new Set(corpus.passages.flatMap((p) => p.jurisdictions))].filter((s) => !known.has(s));
  if (unknown.length > 0) {
    throw new Error(`unknown jurisdictions ${unknown.slice(0, 10).join(", ")}: add them first (regkb jurisdiction add) or list them in the manifest`);
  }
  const byDocument = new Map<string, CorpusPassage[]>();
  for (const p of corpus.passages) {
    const list = byDocument.get(p.document) ?? [];
    list.push(p);
    byDocument.set(p.document, list);
  }
  const summary: ImportSummary = { documents: byDocument.size, jurisdictions: corpus.jurisdictions.length, chunksAdded: 0, chunksUnchanged: 0, chunksRemoved: 0, elapsedMs: 0 };
  let done = 0;
  const total = corpus.passages.length;
  onProgress?.({ doneChunks: 0, totalChunks: total });
  for (const [document, passages] of byDocument) {
    // One instrument has one set of jurisdictions in the index (its first passage's).
    const jurisdictions = passages[0]!.jurisdictions;
    const result = await indexDocument(deps, {
      documentId: corpusDocumentId(document),
      ownerOrgId: null,
      jurisdictions,
      passages: passages.map((p, position) => ({ source: p.source, citationPath: p.citationPath, heading: p.heading, title: p.title, text: p.text, position })),
    });
    summary.chunksAdded += result.added;
    summary.chunksUnchanged += result.unchanged;
    summary.chunksRemoved += result.removed;
    done += passages.length;
    onProgress?.({ doneChunks: done, totalChunks: total });
  }
  summary.elapsedMs = Math.round(nowMs() - started);
  return summary;
}

/** The sample corpus embedded in the binary (data/corpus): GDPR, 12 CFR 1003, 50 state statutes. */
export async function loadSampleCorpus(): Promise<{ jurisdictions: CorpusJurisdiction[]; passages: CorpusPassage[] }> {
  const jurisdictions = (sampleJurisdictions as unknown[]).map((j) => checkJurisdiction(j, "sample jurisdictions"));
  const passages = parsePassagesJsonl(await readAssetText(passagesPath), "sample passages");
  return { jurisdictions, passages };
}

export async function importSampleCorpus(deps: IndexingDeps, onProgress?: (p: ImportProgress) => void): Promise<ImportSummary> {
  return importPassages(deps, await loadSampleCorpus(), onProgress);
}

// ---------- PATH imports ----------

/** Bounds on a folder import: files, bytes per file. */
export const IMPORT_FILES_MAX = 10_000;
export const IMPORT_FILE_BYTES_MAX = 50 * 1024 * 1024;
export const IMPORT_JSONL_BYTES_MAX = 1024 * 1024 * 1024;
export const MANIFEST_FILE = "manifest.json";
const PDF_TIMEOUT_MS = 120_000;

interface ManifestDocument {
  file: string;
  title: string;
  jurisdictions: string[];
}

interface Manifest {
  jurisdictions: CorpusJurisdiction[];
  documents: ManifestDocument[];
}

function readManifest(text: string, origin: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${origin}: not valid JSON`);
  }
  const v = value as { jurisdictions?: unknown; documents?: unknown };
  if (!Array.isArray(v.documents) || v.documents.length === 0 || v.documents.length > IMPORT_FILES_MAX) {
    throw new Error(`${origin}: "documents" must be an array of 1 to ${IMPORT_FILES_MAX} entries`);
  }
  const documents = v.documents.map((d: unknown, i: number): ManifestDocument => {
    const doc = d as Partial<ManifestDocument>;
    if (typeof doc.file !== "string" || doc.file === "") throw new Error(`${origin}: documents[${i}].file must be a file name`);
    if (typeof doc.title !== "string" || doc.title === "" || doc.title.length > 1000) throw new Error(`${origin}: documents[${i}].title must be 1..1000 characters`);
    if (!Array.isArray(doc.jurisdictions) || doc.jurisdictions.length === 0 || !doc.jurisdictions.every((s) => typeof s === "string" && SLUG.test(s))) {
      throw new Error(`${origin}: documents[${i}].jurisdictions must be a non-empty array of slugs`);
    }
    return { file: doc.file, title: doc.title, jurisdictions: doc.jurisdictions };
  });
  const jurisdictions = v.jurisdictions === undefined ? [] : (v.jurisdictions as unknown[]).map((j) => checkJurisdiction(j, origin));
  return { jurisdictions, documents };
}

/**
 * A text document's blocks: markdown headings ("## Section 4") and statute-style lines
 * ("§ 12. Notice") open a section, each paragraph is a line, so chunks follow sections.
 */
function textDocumentBlocks(title: string, text: string): StructureBlock[] {
  const blocks: StructureBlock[] = [];
  let heading = "";
  let paragraph: string[] = [];
  let lines: { text: string }[] = [];
  const flushParagraph = () => {
    const joined = paragraph.join(" ").trim();
    if (joined !== "") lines.push({ text: joined });
    paragraph = [];
  };
  const flushSection = () => {
    flushParagraph();
    if (lines.length > 0) blocks.push({ path: heading === "" ? [title] : [title, heading], heading: heading || title, lines });
    lines = [];
  };
  for (const raw of normaliseSpaces(text).split(/\r?\n/)) {
    const line = raw.trim();
    const md = /^#{1,6}\s+(.+?)\s*#*$/.exec(line);
    const section = /^(§+\s*[\w.:-]+\.?.{0,120})$/.exec(line);
    if (md || (section && line.split(/\s+/).length <= 20)) {
      flushSection();
      heading = (md ? md[1]! : section![1]!).replace(/\.$/, "");
    } else if (line === "") {
      flushParagraph();
    } else {
      paragraph.push(line);
    }
  }
  flushSection();
  return blocks;
}

function pdfBlocks(fileName: string, pages: string[]): StructureBlock[] {
  return pages.flatMap((page, i) => {
    const lines = normaliseSpaces(page)
      .split(/\n{2,}|\r?\n(?=\s*(?:\(|\d+\.|§))/)
      .map((l) => l.replace(/\s+/g, " ").trim())
      .filter((l) => l !== "")
      .map((text) => ({ text }));
    return lines.length === 0 ? [] : [{ path: [fileName, `page ${i + 1}`], heading: fileName, lines }];
  });
}

/**
 * `regkb corpus import PATH`: a .jsonl file of passages (optionally with a
 * jurisdictions.json beside it), or a folder holding manifest.json and the files it lists.
 */
export async function loadCorpusPath(path: string, pdf: () => PdfParser): Promise<{ jurisdictions: CorpusJurisdiction[]; passages: CorpusPassage[] }> {
  const full = resolve(path);
  if (!existsSync(full)) throw new Error(`${path}: no such file or folder`);
  if (statSync(full).isFile()) {
    if (extname(full) !== ".jsonl") throw new Error(`${path}: expected a .jsonl file of passages or a folder with ${MANIFEST_FILE}`);
    if (statSync(full).size > IMPORT_JSONL_BYTES_MAX) throw new Error(`${path}: larger than ${IMPORT_JSONL_BYTES_MAX} bytes`);
    const beside = join(full, "..", "jurisdictions.json");
    const jurisdictions = existsSync(beside) ? (JSON.parse(await Bun.file(beside).text()) as unknown[]).map((j) => checkJurisdiction(j, beside)) : [];
    return { jurisdictions, passages: parsePassagesJsonl(await Bun.file(full).text(), basename(full)) };
  }
  const manifestPath = join(full, MANIFEST_FILE);
  if (!existsSync(manifestPath)) {
    const files = readdirSync(full).slice(0, 5).join(", ");
    throw new Error(`${path}: no ${MANIFEST_FILE} (it lists each file with its title and jurisdictions); found ${files || "nothing"}`);
  }
  const manifest = readManifest(await Bun.file(manifestPath).text(), manifestPath);
  const passages: CorpusPassage[] = [];
  for (const doc of manifest.documents) {
    const file = resolve(full, doc.file);
    if (relative(full, file).startsWith("..")) throw new Error(`${doc.file}: outside the imported folder`);
    if (!existsSync(file)) throw new Error(`${doc.file}: listed in the manifest but missing`);
    if (statSync(file).size > IMPORT_FILE_BYTES_MAX) throw new Error(`${doc.file}: larger than ${IMPORT_FILE_BYTES_MAX} bytes`);
    const ext = extname(file).toLowerCase();
    let blocks: StructureBlock[];
    if (ext === ".md" || ext === ".txt") blocks = textDocumentBlocks(doc.title, await Bun.file(file).text());
    else if (ext === ".pdf") blocks = pdfBlocks(doc.file, await pdf().extractPageTexts(await Bun.file(file).bytes(), { timeoutMs: PDF_TIMEOUT_MS }));
    else throw new Error(`${doc.file}: only .md, .txt and .pdf files can be imported`);
    for (const chunk of chunkBlocks(blocks)) {
      passages.push({ document: relative(full, file), source: doc.title, citationPath: chunk.citationPath, heading: chunk.heading, title: chunk.title || undefined, text: chunk.text, jurisdictions: doc.jurisdictions });
    }
  }
  return { jurisdictions: manifest.jurisdictions, passages };
}
