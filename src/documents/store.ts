import { isPostgres, type SqlDatabase } from "../db/sql-database";

export type DocumentStatus = "processing" | "ready" | "failed";

export interface DocumentRow {
  id: string;
  orgId: string;
  filename: string;
  status: DocumentStatus;
  jurisdictionSlugs: string[];
  pages: number;
  sizeBytes: number;
  sha256: string;
  creditsChargedPence: number;
  runId: string;
  chunkCount: number | null;
  error: string | null;
  createdAtMs: number;
  completedAtMs: number | null;
}

type StoredRow = Omit<DocumentRow, "jurisdictionSlugs"> & { jurisdictionSlugs: string };

// Aliases quoted: PostgreSQL folds unquoted ones to lower case.
const COLUMNS = `id, org_id AS "orgId", filename, status, jurisdiction_slugs AS "jurisdictionSlugs", pages,
  size_bytes AS "sizeBytes", sha256, credits_charged_pence AS "creditsChargedPence", run_id AS "runId",
  chunk_count AS "chunkCount", error, created_at_ms AS "createdAtMs", completed_at_ms AS "completedAtMs"`;

/** Newest first; the list endpoint is bounded by this. */
export const DOCUMENTS_LIST_MAX = 1000;

function fromStored(row: StoredRow): DocumentRow {
  return { ...row, jurisdictionSlugs: JSON.parse(row.jurisdictionSlugs) as string[] };
}

export function insertDocument(db: SqlDatabase, doc: Omit<DocumentRow, "chunkCount" | "error" | "completedAtMs">): void {
  db.query(
    `INSERT INTO documents (id, org_id, filename, status, jurisdiction_slugs, pages, size_bytes, sha256,
       credits_charged_pence, run_id, created_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    doc.id,
    doc.orgId,
    doc.filename,
    doc.status,
    JSON.stringify(doc.jurisdictionSlugs),
    doc.pages,
    doc.sizeBytes,
    doc.sha256,
    doc.creditsChargedPence,
    doc.runId,
    doc.createdAtMs,
  );
}

export function findDocument(db: SqlDatabase, id: string): DocumentRow | null {
  const row = db.query<StoredRow, [string]>(`SELECT ${COLUMNS} FROM documents WHERE id = ?`).get(id);
  return row ? fromStored(row) : null;
}

export function findOrgDocument(db: SqlDatabase, orgId: string, id: string): DocumentRow | null {
  const row = db.query<StoredRow, [string, string]>(`SELECT ${COLUMNS} FROM documents WHERE id = ? AND org_id = ?`).get(id, orgId);
  return row ? fromStored(row) : null;
}

/** Ties in time go by id in byte order on both engines, whatever PostgreSQL's collation. */
export function listOrgDocuments(db: SqlDatabase, orgId: string, limit: number): DocumentRow[] {
  const id = isPostgres(db) ? `id COLLATE "C"` : "id";
  return db
    .query<StoredRow, [string, number]>(
      `SELECT ${COLUMNS} FROM documents WHERE org_id = ? ORDER BY created_at_ms DESC, ${id} DESC LIMIT ?`,
    )
    .all(orgId, limit)
    .map(fromStored);
}

/** processing → ready; false when the document is gone or already finished. */
export function markReady(db: SqlDatabase, id: string, chunkCount: number, nowMs: number): boolean {
  return (
    db
      .query("UPDATE documents SET status = 'ready', chunk_count = ?, completed_at_ms = ? WHERE id = ? AND status = 'processing'")
      .run(chunkCount, nowMs, id).changes === 1
  );
}

/** processing → failed; false when the document is gone or already finished. */
export function markFailed(db: SqlDatabase, id: string, error: string, nowMs: number): boolean {
  return (
    db
      .query("UPDATE documents SET status = 'failed', error = ?, completed_at_ms = ? WHERE id = ? AND status = 'processing'")
      .run(error.slice(0, 1000), nowMs, id).changes === 1
  );
}

export function deleteDocumentRow(db: SqlDatabase, id: string): boolean {
  return db.query("DELETE FROM documents WHERE id = ?").run(id).changes === 1;
}
