// The documents store (src/documents/store.ts) and where PDFs are kept (document-files.ts)
// on SQLite and on PostgreSQL through the synchronous handle (test/helpers/engines.ts):
// rows found, listed, finished once and deleted once; a real PDF's bytes written in the
// document's transaction, read back exactly and gone with the document.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { immediate } from "../../src/db/transaction";
import { DataDirectoryFiles, PostgresDocumentFiles, type DocumentFiles } from "../../src/documents/document-files";
import * as store from "../../src/documents/store";
import { uuidv7 } from "../../src/ids";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { tempDir } from "../helpers/server";
import { REAL_PDF_DIR } from "./real-pdfs";

const PDF = "indiana_TITLE24_AR4.9.pdf";

forEachEngine((current, name) => {
  let engine: TestEngine;
  let orgId: string;
  let files: DocumentFiles;
  let pdf: Uint8Array;
  const dataDir = tempDir("regkb-document-files-");
  beforeAll(async () => {
    engine = current();
    orgId = engine.createOrganisation("Documents Ltd");
    // PostgreSQL reads a PDF in parts of 7 KiB here, so a real one takes several.
    files = name === "postgres" ? new PostgresDocumentFiles(engine.db, 7 * 1024) : new DataDirectoryFiles(dataDir);
    pdf = await Bun.file(join(REAL_PDF_DIR, PDF)).bytes();
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const newDocument = (overrides: Partial<store.DocumentRow> = {}) => ({
    id: uuidv7(),
    orgId,
    filename: "policy.pdf",
    status: "processing" as const,
    jurisdictionSlugs: ["eu", "us-ny"],
    pages: 3,
    sizeBytes: 1234,
    sha256: "a".repeat(64),
    creditsChargedPence: 10,
    runId: uuidv7(),
    createdAtMs: 1_700_000_000_000,
    ...overrides,
  });

  /** As createDocument does: stage, then the row and the bytes in one transaction. */
  async function storeDocument(bytes: Uint8Array, failInTransaction = false): Promise<string> {
    const doc = newDocument({ sizeBytes: bytes.byteLength });
    await files.stage(orgId, doc.id, bytes);
    try {
      immediate(engine.db, () => {
        store.insertDocument(engine.db, doc);
        files.write(engine.db, orgId, doc.id, bytes);
        if (failInTransaction) throw new Error("the charge failed");
      });
    } catch (error) {
      files.remove(orgId, doc.id);
      if (!failInTransaction) throw error;
    }
    return doc.id;
  }

  test("a document's row comes back as written, for its organisation only", () => {
    const doc = newDocument();
    store.insertDocument(engine.db, doc);
    const expected = { ...doc, chunkCount: null, error: null, completedAtMs: null };
    expect(store.findDocument(engine.db, doc.id)).toEqual(expected);
    expect(store.findOrgDocument(engine.db, orgId, doc.id)).toEqual(expected);
    expect(store.findOrgDocument(engine.db, engine.createOrganisation("Other"), doc.id)).toBeNull();
    expect(store.findDocument(engine.db, uuidv7())).toBeNull();
  });

  test("the list is newest first, ties by id descending in byte order, and bounded", () => {
    const lister = engine.createOrganisation("Lister");
    const stem = uuidv7().slice(0, -2);
    const [newest, lower, higher] = [`${stem}0a`, `${stem}0b`, `${stem}0c`];
    store.insertDocument(engine.db, newDocument({ id: newest, orgId: lister, createdAtMs: 2_000 }));
    store.insertDocument(engine.db, newDocument({ id: lower, orgId: lister, createdAtMs: 1_000 }));
    store.insertDocument(engine.db, newDocument({ id: higher, orgId: lister, createdAtMs: 1_000 }));
    expect(store.listOrgDocuments(engine.db, lister, 10).map((d) => d.id)).toEqual([newest, higher, lower]);
    expect(store.listOrgDocuments(engine.db, lister, 2).map((d) => d.id)).toEqual([newest, higher]);
  });

  test("ready and failed are each reached once, from processing only", () => {
    const ready = newDocument();
    store.insertDocument(engine.db, ready);
    expect(store.markReady(engine.db, ready.id, 7, 5_000)).toBe(true);
    expect(store.markReady(engine.db, ready.id, 8, 6_000)).toBe(false);
    expect(store.markFailed(engine.db, ready.id, "late", 6_000)).toBe(false);
    expect(store.findDocument(engine.db, ready.id)).toMatchObject({ status: "ready", chunkCount: 7, completedAtMs: 5_000, error: null });

    const failed = newDocument();
    store.insertDocument(engine.db, failed);
    expect(store.markFailed(engine.db, failed.id, "x".repeat(1500), 5_000)).toBe(true);
    expect(store.markReady(engine.db, failed.id, 1, 6_000)).toBe(false);
    expect(store.findDocument(engine.db, failed.id)).toMatchObject({ status: "failed", chunkCount: null, error: "x".repeat(1000) });
    expect(store.markReady(engine.db, uuidv7(), 1, 1)).toBe(false);
  });

  test("a row is deleted once", () => {
    const doc = newDocument();
    store.insertDocument(engine.db, doc);
    expect(store.deleteDocumentRow(engine.db, doc.id)).toBe(true);
    expect(store.deleteDocumentRow(engine.db, doc.id)).toBe(false);
    expect(store.findDocument(engine.db, doc.id)).toBeNull();
  });

  test("a real PDF's bytes come back exactly, for its organisation only", async () => {
    const id = await storeDocument(pdf);
    const read = await files.read(orgId, id);
    expect(read).not.toBeNull();
    expect(Buffer.from(read!).equals(Buffer.from(pdf))).toBe(true);
    expect(await files.read(orgId, uuidv7())).toBeNull();
    if (name === "postgres") expect(await files.read(engine.createOrganisation("Stranger"), id)).toBeNull();
  });

  test("deleting the document removes its bytes", async () => {
    const id = await storeDocument(pdf);
    expect(store.deleteDocumentRow(engine.db, id)).toBe(true);
    if (name === "postgres") {
      // The foreign key's cascade: no bytes outlive the row, before any remove().
      expect(engine.db.query("SELECT count(*) AS n FROM document_files WHERE document_id = ?").get(id)).toEqual({ n: 0 });
    }
    files.remove(orgId, id);
    expect(await files.read(orgId, id)).toBeNull();
  });

  test("a document whose transaction fails leaves neither row nor bytes", async () => {
    const id = await storeDocument(pdf, true);
    expect(store.findDocument(engine.db, id)).toBeNull();
    expect(await files.read(orgId, id)).toBeNull();
    if (name === "postgres") expect(engine.db.query("SELECT count(*) AS n FROM document_files WHERE document_id = ?").get(id)).toEqual({ n: 0 });
  });

  test("start-up cleanup removes only what a crash left half-written", async () => {
    const id = await storeDocument(pdf);
    if (name === "sqlite") {
      // A dead writer's partial file (pid 2^22 + 1 is beyond Linux's pid range).
      await Bun.write(join(dataDir, "documents", orgId, `${uuidv7()}.pdf.4194305.partial`), pdf);
      expect(files.removeStale()).toBe(1);
    } else {
      expect(files.removeStale()).toBe(0);
    }
    expect(Buffer.from((await files.read(orgId, id))!).equals(Buffer.from(pdf))).toBe(true);
  });
});
