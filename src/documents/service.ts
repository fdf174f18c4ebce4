/**
 * Documents: upload (count pages, charge, store, queue ingestion), list, read, delete.
 * Ingestion itself is the document_ingest run (ingest.ts).
 */
import { getBalance } from "../billing/ledger";
import { ledgerKeys } from "../billing/ledger-keys";
import { documentPence } from "../billing/pricing";
import { isoFromMs, type Clock } from "../clock";
import type { Config } from "../config";
import type { SqlDatabase } from "../db/sql-database";
import { immediate } from "../db/transaction";
import { insufficientCredit, Refusal } from "../errors";
import { uuidv7 } from "../ids";
import { createChargedRun, type PaidRunDeps } from "../jobs/paid-run";
import type { PassageWriter } from "../search/passage-writer";
import { resolveJurisdictions } from "../search/service";
import type { DocumentFiles } from "./document-files";
import type { DocumentFailureLimit } from "./failure-limit";
import { PdfRejectedError, type PdfParser } from "./pdf/parser";
import * as store from "./store";
import type { Upload } from "./upload";

export const DOCUMENT_INGEST_KIND = "document_ingest";

/** What documents use: paid runs, where PDFs and passages go, the PDF parsers, the failure limit and their settings. */
export interface DocumentDeps extends PaidRunDeps {
  clock: Clock;
  config: Pick<Config, "pdfParseTimeoutMs" | "ingestConcurrency">;
  documentFiles: DocumentFiles;
  passages: PassageWriter;
  pdf: PdfParser;
  documentFailures: DocumentFailureLimit;
}

export interface DocumentIngestInput {
  documentId: string;
}

/** The Document resource of interface.md §2 (plus `error` once ingestion has failed). */
export interface DocumentView {
  id: string;
  filename: string;
  status: store.DocumentStatus;
  jurisdictionSlugs: string[];
  pages: number | null;
  createdAt: string;
  error: string | null;
}

export interface CreatedDocument {
  id: string;
  status: store.DocumentStatus;
  filename: string;
  pages: number;
  creditsChargedPence: number;
  availablePence: number;
}

export function toView(row: store.DocumentRow): DocumentView {
  return {
    id: row.id,
    filename: row.filename,
    status: row.status,
    jurisdictionSlugs: row.jurisdictionSlugs,
    pages: row.pages,
    createdAt: isoFromMs(row.createdAtMs),
    error: row.error,
  };
}

/**
 * Validates and counts pages first (nothing is charged or stored for a rejected file, but
 * the refusal counts towards the organisation's failure limit: failure-limit.ts), then
 * charges, records the document and queues its ingestion in one transaction.
 * `id` is the API request's operation id (http/idempotency.ts): a retry of a request
 * that created the document before its response was stored finds it instead of charging again.
 */
export async function createDocument(deps: DocumentDeps, orgId: string, upload: Upload, id: string = uuidv7()): Promise<CreatedDocument> {
  const { db, config, clock } = deps;
  const existing = store.findOrgDocument(db, orgId, id);
  if (existing) return createdView(existing, getBalance(db, orgId).availablePence);
  // Omitted or [] means the document applies to every search of the organisation (decisions.md).
  const jurisdictionSlugs =
    upload.jurisdictionSlugs && upload.jurisdictionSlugs.length > 0 ? resolveJurisdictions(deps, orgId, upload.jurisdictionSlugs) : [];

  deps.documentFailures.check(orgId, clock.nowMs());
  let pages: number;
  try {
    ({ pages } = await deps.pdf.inspectPdf(upload.bytes, { timeoutMs: config.pdfParseTimeoutMs }));
  } catch (error) {
    if (!(error instanceof PdfRejectedError)) throw error;
    // Free (nothing was charged), but counted: failure-limit.ts.
    deps.documentFailures.record(orgId, clock.nowMs());
    throw new Refusal(error.code, error.details);
  }
  const amountPence = documentPence(pages);
  // Not authoritative (the charge below is), but spares writing a file we would delete.
  const { availablePence: availableBeforePence } = getBalance(db, orgId);
  if (availableBeforePence < amountPence) {
    throw insufficientCredit(availableBeforePence, amountPence);
  }

  const runId = uuidv7();
  await deps.documentFiles.stage(orgId, id, upload.bytes);
  let availablePence: number;
  try {
    availablePence = createChargedRun(deps, {
      id: runId,
      orgId,
      kind: DOCUMENT_INGEST_KIND,
      input: { documentId: id } satisfies DocumentIngestInput,
      charge: {
        amountPence,
        key: ledgerKeys.document(id),
        description: `Document ingestion: ${upload.filename} (${pages} ${pages === 1 ? "page" : "pages"})`,
        ref: id,
      },
      alongside: (db, nowMs) => {
        store.insertDocument(db, {
          id,
          orgId,
          filename: upload.filename,
          status: "processing",
          jurisdictionSlugs,
          pages,
          sizeBytes: upload.bytes.byteLength,
          sha256: new Bun.CryptoHasher("sha256").update(upload.bytes).digest("hex"),
          creditsChargedPence: amountPence,
          runId,
          createdAtMs: nowMs,
        });
        deps.documentFiles.write(db, orgId, id, upload.bytes);
        return getBalance(db, orgId).availablePence;
      },
    });
  } catch (error) {
    deps.documentFiles.remove(orgId, id);
    throw error;
  }
  return { id, status: "processing", filename: upload.filename, pages, creditsChargedPence: amountPence, availablePence };
}

function createdView(row: store.DocumentRow, availablePence: number): CreatedDocument {
  return { id: row.id, status: row.status, filename: row.filename, pages: row.pages, creditsChargedPence: row.creditsChargedPence, availablePence };
}

export function listDocuments(deps: { db: SqlDatabase }, orgId: string): DocumentView[] {
  return store.listOrgDocuments(deps.db, orgId, store.DOCUMENTS_LIST_MAX).map(toView);
}

export function getDocument(deps: { db: SqlDatabase }, orgId: string, id: string): DocumentView | null {
  const row = store.findOrgDocument(deps.db, orgId, id);
  return row ? toView(row) : null;
}

/**
 * Removes the passages, the row and the file; no refund (interface.md billing rule 8).
 * An ingestion still running notices the row is gone, stops its parser and removes
 * anything it indexed meanwhile (ingest.ts). False when there was nothing to delete.
 */
/** Resolves once the document is gone from the system of record and from this node's own index. */
export async function deleteDocument(deps: { db: SqlDatabase; documentFiles: DocumentFiles; passages: PassageWriter }, orgId: string, id: string): Promise<boolean> {
  const { db } = deps;
  const row = store.findOrgDocument(db, orgId, id);
  if (!row) return false;
  const deleted = immediate(db, () => {
    if (!store.deleteDocumentRow(db, id)) return false;
    deps.passages.deleteDocumentChunks(id);
    return true;
  });
  if (!deleted) return false;
  deps.documentFiles.remove(row.orgId, id);
  await deps.passages.settled();
  return true;
}
