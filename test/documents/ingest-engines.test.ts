// A document's whole life on SQLite and on PostgreSQL through the synchronous handle: upload
// (charged, its row and its PDF in one transaction), ingestion by the run engine (the PDF
// read back, its passages written and searchable on this node, ready), a scan that fails and
// is refunded, and deletion (row, PDF and passages gone). On PostgreSQL the PDF lives in
// document_files and the passages in search_chunks, and this node's index follows them
// through its replica follower, as a node serving from PostgreSQL will.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { getBalance, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { systemClock } from "../../src/clock";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import type { SqlDatabase } from "../../src/db/sql-database";
import { DataDirectoryFiles, PostgresDocumentFiles } from "../../src/documents/document-files";
import { DocumentFailureLimit } from "../../src/documents/failure-limit";
import { documentIngestSpec, NO_TEXT_LAYER_MESSAGE } from "../../src/documents/ingest";
import { createPdfParser } from "../../src/documents/pdf/parser";
import { createDocument, deleteDocument, getDocument, type DocumentDeps } from "../../src/documents/service";
import { RunEngine } from "../../src/jobs/engine";
import { createLogger } from "../../src/log";
import { Metrics } from "../../src/metrics";
import { LocalPassageWriter } from "../../src/search/passage-writer";
import { ReplicaFollower } from "../../src/search/replica/follower";
import { PostgresPassageWriter } from "../../src/search/replica/postgres-passage-writer";
import type { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { readySearchIndex, staticEmbedder } from "../helpers/search-index";
import { tempDir } from "../helpers/server";
import { imageOnlyPdf } from "../fixtures/pdf/hostile";
import { REAL_PDF_DIR, REAL_PDFS } from "./real-pdfs";

const PDF = REAL_PDFS.find((p) => p.file === "iowa_715c.pdf")!;

forEachEngine((current, engineName) => describe("documents", () => {
  let engine: TestEngine;
  let deps: DocumentDeps;
  let runs: RunEngine<SqlDatabase>;
  let index: SearchIndex;
  let orgId: string;
  const dataDir = tempDir("regkb-ingest-engines-");
  let nodeDb: Database | undefined;
  let sql: SQL | undefined;

  beforeAll(async () => {
    engine = current();
    const { db } = engine;
    const embedder = await staticEmbedder();
    // The scan's expected failure is logged at warn.
    const log = createLogger("error");
    runs = new RunEngine<SqlDatabase>({
      config: { runLeaseMs: 30_000, runMaxAttempts: 2, shutdownTimeoutMs: 5_000, runsPerOrganisationMax: 0 },
      db,
      clock: systemClock,
      log,
      metrics: new Metrics(),
    });
    const shared = {
      // Until Deps.db is a SqlDatabase (PaidRunDeps still names bun:sqlite's), the handle stands in for it.
      db: db as unknown as Database,
      clock: systemClock,
      jobs: runs,
      config: { pdfParseTimeoutMs: 60_000, ingestConcurrency: 1 },
      pdf: createPdfParser({ childrenMax: 1, memoryBytes: 512 * 1024 * 1024 }),
      documentFailures: new DocumentFailureLimit(100),
    };
    if (engineName === "sqlite") {
      index = await readySearchIndex(db as unknown as Database, embedder);
      deps = { ...shared, documentFiles: new DataDirectoryFiles(dataDir), passages: new LocalPassageWriter(index) };
    } else {
      nodeDb = await openDatabase(dataDir);
      index = await readySearchIndex(nodeDb, embedder);
      sql = openPostgres({ url: engine.url!, poolSize: 2 });
      const follower = new ReplicaFollower(sql, index);
      const passages = new PostgresPassageWriter({
        db,
        embedder,
        afterWrite: async () => {
          await follower.catchUp();
        },
        onAfterWriteError: (error) => log.error("catch_up_failed", { error: error.message }),
      });
      deps = { ...shared, documentFiles: new PostgresDocumentFiles(db), passages };
    }
    runs.register(documentIngestSpec(deps));
    runs.start();
    orgId = engine.createOrganisation("Ingest Ltd");
    topUp(db, { orgId, amountPence: 1_000, key: ledgerKeys.operatorTopUp(orgId, "test"), description: "test credit", nowMs: Date.now() });
  });
  // Inside this describe block, so before the engine's own afterAll closes (and drops) its database.
  afterAll(async () => {
    await runs.stop();
    deps.pdf.close();
    await sql?.close();
    nodeDb?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const available = () => getBalance(engine.db, orgId).availablePence;
  async function settled(id: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const doc = getDocument({ db: engine.db }, orgId, id)!;
      if (doc.status !== "processing" || Date.now() > deadline) return doc;
      await Bun.sleep(25);
    }
  }
  /** The document's passages in the system of record, and in this node's index. */
  const passageCounts = (id: string) =>
    [engine.db, index.db].map((db) => db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM search_chunks WHERE document_id = ?").get(id)!.n);
  const sources = async (query: string) =>
    (await searchKnowledgeBase({ searchIndex: index }, { orgId, query, jurisdictions: [], topK: 10 })).map((m) => m.source);

  let readyId: string;

  test("a real PDF is charged, stored, ingested and searchable on this node when it is ready", async () => {
    const bytes = await Bun.file(join(REAL_PDF_DIR, PDF.file)).bytes();
    const before = available();
    const created = await createDocument(deps, orgId, { filename: PDF.file, bytes, jurisdictionSlugs: undefined });
    expect(created).toMatchObject({ status: "processing", pages: PDF.pages, creditsChargedPence: 10, availablePence: before - 10 });
    readyId = created.id;
    expect(Buffer.from((await deps.documentFiles.read(orgId, readyId))!).equals(Buffer.from(bytes))).toBe(true);
    const doc = await settled(readyId);
    expect(doc).toMatchObject({ status: "ready", error: null });
    const [recorded, indexed] = passageCounts(readyId);
    expect(recorded).toBeGreaterThan(0);
    // Ready only once this node's index holds them (PostgreSQL: its catch-up was awaited).
    expect(indexed).toBe(recorded);
    expect(await sources(PDF.sentence)).toContain(PDF.file);
  });

  test("a scan without text fails, is refunded once, and leaves no passages", async () => {
    const before = available();
    const created = await createDocument(deps, orgId, { filename: "scan.pdf", bytes: imageOnlyPdf(2), jurisdictionSlugs: undefined });
    expect(available()).toBe(before - created.creditsChargedPence);
    const doc = await settled(created.id);
    expect(doc).toMatchObject({ status: "failed", error: NO_TEXT_LAYER_MESSAGE });
    expect(available()).toBe(before);
    expect(passageCounts(created.id)).toEqual([0, 0]);
  });

  test("deleting the document removes its row, its PDF and its passages, here and on this node", async () => {
    expect(await deleteDocument(deps, orgId, readyId)).toBe(true);
    expect(await deleteDocument(deps, orgId, readyId)).toBe(false);
    expect(getDocument({ db: engine.db }, orgId, readyId)).toBeNull();
    expect(await deps.documentFiles.read(orgId, readyId)).toBeNull();
    expect(passageCounts(readyId)[0]).toBe(0);
    const deadline = Date.now() + 30_000;
    while (passageCounts(readyId)[1]! > 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(passageCounts(readyId)).toEqual([0, 0]);
    expect(await sources(PDF.sentence)).not.toContain(PDF.file);
  });
}));
