/**
 * Where uploaded PDFs are kept: the data directory (a single node, files.ts), or PostgreSQL's
 * document_files beside the documents row (every node reads the same bytes). The upload flow
 * calls `stage` before the transaction that records the document and `write` inside it, so
 * each store keeps the bytes where a crash cannot leave a row without its file.
 */
import type { SqlDatabase } from "../db/sql-database";
import { documentPath, removeDocumentFile, removeStalePartialFiles, storeDocumentFile } from "./files";

export interface DocumentFiles {
  /** Before the document's transaction: bytes kept outside the database are written here. */
  stage(orgId: string, documentId: string, bytes: Uint8Array): Promise<void>;
  /** Inside the document's transaction, after its row is inserted (`db`: that transaction's handle). */
  write(db: SqlDatabase, orgId: string, documentId: string, bytes: Uint8Array): void;
  /** The PDF, or null if it is not there. */
  read(orgId: string, documentId: string): Promise<Uint8Array | null>;
  /** After the row is deleted, or its transaction failed. */
  remove(orgId: string, documentId: string): void;
  /** At start, before the first upload: removes what a crash left half-written; returns how many. */
  removeStale(): number;
}

/** <dataDir>/documents/<orgId>/<documentId>.pdf, written before the row (a crash leaves a file no row names, never the reverse). */
export class DataDirectoryFiles implements DocumentFiles {
  constructor(private readonly dataDir: string) {}

  stage(orgId: string, documentId: string, bytes: Uint8Array): Promise<void> {
    return storeDocumentFile(documentPath(this.dataDir, orgId, documentId), bytes);
  }

  write(): void {}

  async read(orgId: string, documentId: string): Promise<Uint8Array | null> {
    const file = Bun.file(documentPath(this.dataDir, orgId, documentId));
    return (await file.exists()) ? await file.bytes() : null;
  }

  remove(orgId: string, documentId: string): void {
    removeDocumentFile(documentPath(this.dataDir, orgId, documentId));
  }

  removeStale(): number {
    return removeStalePartialFiles(this.dataDir);
  }
}

/** Bytes read per statement: the handle's replies are bounded (64 MiB), a PDF may be larger. */
export const POSTGRES_FILE_READ_BYTES = 16 * 1024 * 1024;

/**
 * PostgreSQL's document_files: written in the documents row's transaction, removed with the
 * row (foreign key cascade), so there is never a row without its bytes nor bytes without a row.
 */
export class PostgresDocumentFiles implements DocumentFiles {
  constructor(
    private readonly db: SqlDatabase,
    private readonly readPartBytes = POSTGRES_FILE_READ_BYTES,
  ) {}

  async stage(): Promise<void> {}

  write(db: SqlDatabase, _orgId: string, documentId: string, bytes: Uint8Array): void {
    db.query("INSERT INTO document_files (document_id, pdf) VALUES (?, ?)").run(documentId, bytes);
  }

  /** In one snapshot (a deferred transaction is REPEATABLE READ on PostgreSQL), part by part. */
  async read(orgId: string, documentId: string): Promise<Uint8Array | null> {
    const { db } = this;
    return db
      .transaction(() => {
        const size = db
          .query<{ bytes: number }, [string, string]>(
            "SELECT octet_length(f.pdf) AS bytes FROM document_files f JOIN documents d ON d.id = f.document_id WHERE f.document_id = ? AND d.org_id = ?",
          )
          .get(documentId, orgId)?.bytes;
        if (size === undefined) return null;
        const pdf = new Uint8Array(size);
        const part = db.query<{ part: Uint8Array }, [number, number, string]>("SELECT substring(pdf FROM ? FOR ?) AS part FROM document_files WHERE document_id = ?");
        for (let offset = 0; offset < size; offset += this.readPartBytes) {
          pdf.set(part.get(offset + 1, this.readPartBytes, documentId)!.part, offset);
        }
        return pdf;
      })
      .deferred();
  }

  remove(_orgId: string, documentId: string): void {
    this.db.query("DELETE FROM document_files WHERE document_id = ?").run(documentId);
  }

  removeStale(): number {
    return 0;
  }
}
