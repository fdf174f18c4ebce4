/**
 * Where ingestion's time goes (for scripts/bench/ingest.ts): each stage of the path a
 * document takes, timed alone over the same PDFs, summed over them.
 *   - parser child start: a new child's first (tiny) request minus a warm child's;
 *   - page count at upload and text extraction: the parser's round trips (warm child);
 *   - inside them, pdf.js in this process: open, load pages, text content, text assembly;
 *   - chunking, embedding (the index's embedder, in its batches), index writes;
 *   - a transaction commit on the same database (one row).
 */
import type { Deps } from "../../src/deps";
import { chunkPages } from "../../src/documents/chunk";
import { createPdfParser } from "../../src/documents/pdf/parser";
import { pageText } from "../../src/documents/pdf/child";
import { warmUpPdf } from "../../src/documents/pdf/warm-up";
import { jurisdictionNames } from "../../src/search/chunk-store";
import { indexDocumentChunks } from "../../src/search/indexing";
import { embeddingText } from "../../src/search/passage-text";

export interface BenchPdf {
  file: string;
  bytes: Uint8Array;
}

const EMBED_BATCH_TEXTS = 64;

export async function measureStages(deps: Deps, orgId: string, pdfs: BenchPdf[]): Promise<string[]> {
  const sums = new Map<string, number>();
  const add = (stage: string, ms: number) => sums.set(stage, (sums.get(stage) ?? 0) + ms);
  const timed = async <T>(stage: string, work: () => Promise<T> | T): Promise<T> => {
    const started = performance.now();
    const result = await work();
    add(stage, performance.now() - started);
    return result;
  };
  const parse = { timeoutMs: deps.config.pdfParseTimeoutMs };

  const parser = createPdfParser({ childrenMax: 1, memoryBytes: deps.config.pdfMemoryBytes });
  const tiny = warmUpPdf();
  const coldMs = await elapsed(() => parser.inspectPdf(tiny, parse));
  const warmMs = await elapsed(() => parser.inspectPdf(tiny, parse));
  const lines = [`parser child start (once): ${(coldMs - warmMs).toFixed(0)} ms (first request ${coldMs.toFixed(0)} ms, warm ${warmMs.toFixed(1)} ms)`];

  const pdfjs = await import("pdfjs-dist/legacy/build/pdf.mjs");
  (globalThis as { pdfjsWorker?: unknown }).pdfjsWorker = await import("pdfjs-dist/legacy/build/pdf.worker.mjs");
  const names = jurisdictionNames(deps.searchIndex.db);
  deps.searchIndex.db.run("CREATE TABLE IF NOT EXISTS bench_commit (n INTEGER)");
  let pages = 0;
  let passages = 0;
  for (const [i, pdf] of pdfs.entries()) {
    await timed("page count at upload (parser round trip)", () => parser.inspectPdf(pdf.bytes, parse));
    const texts = await timed("text extraction (parser round trip)", () => parser.extractPageTexts(pdf.bytes, parse));
    pages += texts.length;

    const task = pdfjs.getDocument({ data: pdf.bytes.slice(), useSystemFonts: false, disableFontFace: true, useWorkerFetch: false, useWasm: false, verbosity: 0 });
    const doc = await timed("  pdf.js open", async () => {
      const d = await task.promise;
      await d.getMetadata();
      return d;
    });
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await timed("  pdf.js load pages", () => doc.getPage(n));
      const content = await timed("  pdf.js text content", () => page.getTextContent());
      await timed("  text assembly", () => pageText(content));
      page.cleanup();
    }
    await task.destroy();

    const chunks = await timed("chunking", () => chunkPages(pdf.file, texts));
    passages += chunks.length;
    const embedTexts = chunks.map((c) => embeddingText("", c.text, [], names));
    await timed("embedding", async () => {
      for (let at = 0; at < embedTexts.length; at += EMBED_BATCH_TEXTS) {
        await deps.searchIndex.embedder.embed(embedTexts.slice(at, at + EMBED_BATCH_TEXTS));
      }
    });
    await timed("index (embedding + writes + commit)", () =>
      indexDocumentChunks(deps, { documentId: `bench-${i}`, orgId, jurisdictions: [], source: pdf.file, chunks }),
    );
    await timed("one write transaction's commit", () => deps.searchIndex.db.transaction(() => deps.searchIndex.db.run("INSERT INTO bench_commit VALUES (1)")).immediate());
  }
  parser.close();
  const index = sums.get("index (embedding + writes + commit)")!;
  sums.set("index writes (index − embedding)", index - sums.get("embedding")!);
  lines.push(`${pdfs.length} PDFs, ${pages} pages, ${passages} passages:`);
  for (const [stage, ms] of sums) lines.push(`${stage.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms  (${(ms / pdfs.length).toFixed(1)} ms per document)`);
  return lines;
}

async function elapsed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}
