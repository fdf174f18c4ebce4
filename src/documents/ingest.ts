/**
 * The document_ingest run: extract each page's text in a parser child, cut it into
 * passages, index them for the organisation → ready. Any failure → failed and the
 * charge refunded once (key refund:<documentId>). A document deleted mid-way stops the
 * run and leaves no passages behind.
 */
import { refund } from "../billing/ledger";
import { ledgerKeys } from "../billing/ledger-keys";
import type { SqlDatabase } from "../db/sql-database";
import { RunFailure, type Run, type RunKindSpec } from "../jobs/types";
import { chunkPages } from "./chunk";
import { PdfRejectedError } from "./pdf/parser";
import { DOCUMENT_INGEST_KIND, type DocumentDeps, type DocumentIngestInput } from "./service";
import * as store from "./store";

export interface DocumentIngestOutput {
  /** The document was deleted before ingestion finished; nothing was indexed. */
  deleted: boolean;
  chunks: number;
}

/** How often a running ingestion checks that its document still exists. */
const DELETION_POLL_MS = 200;
/** Embedding and indexing 500 pages takes seconds; this bounds a stuck attempt beyond the parse deadline. */
const INDEXING_ALLOWANCE_MS = 5 * 60_000;

/**
 * A PDF with pages but no text at all is a scan (images of pages). We have no OCR, so
 * nothing would ever be searchable: ready-with-nothing would look like success and keep
 * the money. Instead it fails with this message and the charge is refunded in full.
 */
export const NO_TEXT_LAYER_MESSAGE =
  "the PDF has no text layer (it looks scanned: its pages are images); OCR is not supported, so nothing could be indexed. The charge has been refunded";

const DELETED: DocumentIngestOutput = { deleted: true, chunks: 0 };

export function documentIngestSpec(deps: DocumentDeps): RunKindSpec<DocumentIngestInput, DocumentIngestOutput> {
  return {
    kind: DOCUMENT_INGEST_KIND,
    concurrency: deps.config.ingestConcurrency,
    // A failure here is deterministic (the same bytes fail the same way); extra attempts
    // only cover a worker that died mid-run.
    maxAttempts: 2,
    timeoutMs: deps.config.pdfParseTimeoutMs + INDEXING_ALLOWANCE_MS,
    execute: (run, signal) => ingest(deps, run, signal),
    onCompleted(db, run, output) {
      const id = run.input.documentId;
      if (!output.deleted && store.markReady(db, id, output.chunks, deps.clock.nowMs())) return;
      // Deleted while the run committed: make sure no passage outlives the row.
      if (!store.findDocument(db, id)) deps.passages.deleteDocumentChunks(id);
    },
    onFailed(db, run, error) {
      failDocument(deps, db, run.input.documentId, error);
    },
  };
}

function failDocument(deps: DocumentDeps, db: SqlDatabase, documentId: string, error: string): void {
  const doc = store.findDocument(db, documentId);
  // Passages indexed before the failure (or after a deletion) must not stay searchable.
  deps.passages.deleteDocumentChunks(documentId);
  if (!doc || !store.markFailed(db, documentId, error, deps.clock.nowMs())) return;
  refund(db, {
    orgId: doc.orgId,
    amountPence: doc.creditsChargedPence,
    key: ledgerKeys.documentRefund(documentId),
    description: `Refund: ingestion of ${doc.filename} failed`,
    ref: documentId,
    nowMs: deps.clock.nowMs(),
  });
}

async function ingest(deps: DocumentDeps, run: Run<DocumentIngestInput, DocumentIngestOutput>, signal: AbortSignal): Promise<DocumentIngestOutput> {
  const { db } = deps;
  const id = run.input.documentId;
  const doc = store.findDocument(db, id);
  if (!doc || doc.status !== "processing") return DELETED;

  const exists = () => store.findDocument(db, id) !== null;
  const deletion = new AbortController();
  const watch = setInterval(() => {
    if (!exists()) deletion.abort(new Error("document deleted"));
  }, DELETION_POLL_MS);
  const stop = AbortSignal.any([signal, deletion.signal]);
  try {
    const pdf = await deps.documentFiles.read(doc.orgId, id);
    if (pdf === null) {
      if (!exists()) return DELETED;
      throw new RunFailure("the stored PDF is missing; the charge has been refunded");
    }
    const pageTexts = await deps.pdf.extractPageTexts(pdf, { timeoutMs: deps.config.pdfParseTimeoutMs, signal: stop });
    const chunks = chunkPages(doc.filename, pageTexts);
    if (chunks.length === 0) throw new RunFailure(NO_TEXT_LAYER_MESSAGE);
    stop.throwIfAborted();
    await deps.passages.indexDocumentChunks({
      documentId: id,
      orgId: doc.orgId,
      jurisdictions: doc.jurisdictionSlugs,
      source: doc.filename,
      chunks: chunks.map(({ text, citationPath, position }) => ({ text, citationPath, position })),
    });
    if (!exists()) {
      deps.passages.deleteDocumentChunks(id);
      return DELETED;
    }
    return { deleted: false, chunks: chunks.length };
  } catch (error) {
    if (deletion.signal.aborted || !exists()) {
      deps.passages.deleteDocumentChunks(id);
      return DELETED;
    }
    if (error instanceof PdfRejectedError) {
      // Refunded (interface.md), but counted: failure-limit.ts.
      deps.documentFailures.record(doc.orgId, deps.clock.nowMs());
      throw new RunFailure(`the PDF could not be read: ${error.details}; the charge has been refunded`);
    }
    throw error;
  } finally {
    clearInterval(watch);
  }
}
