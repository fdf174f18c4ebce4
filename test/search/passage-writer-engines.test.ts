// Where documents' passages are written (src/search/passage-writer.ts): on SQLite straight
// into the node's index; on PostgreSQL into search_chunks and search_chunk_vectors through
// the synchronous handle (replica/postgres-passage-writer.ts), from where the node's replica
// follower (replica/follower.ts) brings them into its own index. On both: a real PDF's
// passages become searchable on the writing node when the write returns, unchanged text is
// not written again, changed text replaces, deletion removes. On PostgreSQL also: the
// stored vectors are the embedder's for the text with the jurisdiction names PostgreSQL
// holds, and the change log records every insert and delete.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import { immediate } from "../../src/db/transaction";
import { chunkPages } from "../../src/documents/chunk";
import { createPdfParser } from "../../src/documents/pdf/parser";
import { insertDocument } from "../../src/documents/store";
import { uuidv7 } from "../../src/ids";
import type { Embedder } from "../../src/search/embedder/types";
import type { DocumentChunksInput } from "../../src/search/indexing";
import { embeddingText } from "../../src/search/passage-text";
import { LocalPassageWriter, type PassageWriter } from "../../src/search/passage-writer";
import { ReplicaFollower } from "../../src/search/replica/follower";
import { PostgresPassageWriter } from "../../src/search/replica/postgres-passage-writer";
import type { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { floatsOfBlob } from "../../src/search/sql";
import { REAL_PDF_DIR, REAL_PDFS } from "../documents/real-pdfs";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { readySearchIndex, staticEmbedder } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

const PDF = REAL_PDFS.find((p) => p.file === "kentucky_KRS_365.732.pdf")!;
const SLUG = "us-ky";
const NAME = "Kentucky";
const NEW_TEXT = "Zorblax escalation: the privacy officer informs the board of every breach within two days.";

let pageTexts: string[];
beforeAll(async () => {
  const parser = createPdfParser({ childrenMax: 1, memoryBytes: 512 * 1024 * 1024 });
  try {
    pageTexts = await parser.extractPageTexts(await Bun.file(join(REAL_PDF_DIR, PDF.file)).bytes(), { timeoutMs: 60_000 });
  } finally {
    parser.close();
  }
});

forEachEngine((current, engineName) => {
  let engine: TestEngine;
  let embedder: Embedder;
  let index: SearchIndex;
  let writer: PassageWriter;
  let orgId: string;
  let input: DocumentChunksInput;
  const nodeDir = tempDir("regkb-passage-writer-");
  let nodeDb: Database | undefined;
  let sql: SQL | undefined;
  const afterWriteErrors: Error[] = [];

  beforeAll(async () => {
    engine = current();
    embedder = await staticEmbedder();
    orgId = engine.createOrganisation("Passages Ltd");
    engine.db.query("INSERT INTO jurisdictions (slug, name, description) VALUES (?, ?, '') ON CONFLICT (slug) DO NOTHING").run(SLUG, NAME);
    const documentId = uuidv7();
    insertDocument(engine.db, {
      id: documentId,
      orgId,
      filename: PDF.file,
      status: "processing",
      jurisdictionSlugs: [SLUG],
      pages: PDF.pages,
      sizeBytes: 1,
      sha256: "0".repeat(64),
      creditsChargedPence: 10,
      runId: uuidv7(),
      createdAtMs: Date.now(),
    });
    const chunks = chunkPages(PDF.file, pageTexts).map(({ text, citationPath, position }) => ({ text, citationPath, position }));
    expect(chunks.length).toBeGreaterThan(2);
    input = { documentId, orgId, jurisdictions: [SLUG], source: PDF.file, chunks };

    if (engineName === "sqlite") {
      // bun:sqlite's Database is the engine's handle here.
      index = await readySearchIndex(engine.db as unknown as Database, embedder);
      writer = new LocalPassageWriter(index);
    } else {
      nodeDb = await openDatabase(nodeDir);
      index = await readySearchIndex(nodeDb, embedder);
      sql = openPostgres({ url: engine.url!, poolSize: 2 });
      const follower = new ReplicaFollower(sql, index);
      writer = new PostgresPassageWriter({
        db: engine.db,
        embedder,
        afterWrite: async () => {
          await follower.catchUp();
        },
        onAfterWriteError: (error) => afterWriteErrors.push(error),
      });
    }
  });
  afterAll(async () => {
    await sql?.close();
    nodeDb?.close();
    rmSync(nodeDir, { recursive: true, force: true });
  });

  /** The document's passages in the system of record (SQLite's own index, or PostgreSQL). */
  const recorded = () =>
    engine.db
      .query<{ id: number; position: number; content: string }, [string]>("SELECT id, position, content FROM search_chunks WHERE document_id = ? ORDER BY position")
      .all(input.documentId);
  /** The document's passages in this node's own index. */
  const indexed = () =>
    index.db.query<{ id: number; position: number }, [string]>("SELECT id, position FROM search_chunks WHERE document_id = ? ORDER BY position").all(input.documentId);
  const sources = async (query: string) =>
    (await searchKnowledgeBase({ searchIndex: index }, { orgId, query, jurisdictions: [SLUG], topK: 10 })).map((m) => m.source);
  /** PostgreSQL's change log for the document after `afterSeq`: its latest change per passage (migration 014), by passage. */
  const changes = (afterSeq = 0) =>
    engine.db
      .query<{ op: string; chunkId: number }, [string, number]>(
        `SELECT op, chunk_id AS "chunkId" FROM passage_changes WHERE document_id = ? AND seq > ? ORDER BY chunk_id`,
      )
      .all(input.documentId, afterSeq);
  const newestSeq = () => engine.db.query<{ seq: number }, []>("SELECT coalesce(max(seq), 0) AS seq FROM passage_changes").get()!.seq;

  test("a real PDF's passages are searchable on this node once the write returns", async () => {
    await writer.indexDocumentChunks(input);
    expect(recorded().map((r) => r.position)).toEqual(input.chunks.map((c) => c.position));
    expect(indexed()).toEqual(recorded().map(({ id, position }) => ({ id, position })));
    expect(await sources(PDF.sentence)).toContain(PDF.file);
  });

  if (engineName === "postgres") {
    test("PostgreSQL holds each passage's vector: the embedder's, for its text with PostgreSQL's jurisdiction names; the embedder is recorded", async () => {
      const rows = engine.db
        .query<{ content: string; embedding: Uint8Array }, [string]>(
          "SELECT c.content, v.embedding FROM search_chunks c JOIN search_chunk_vectors v ON v.chunk_id = c.id WHERE c.document_id = ? ORDER BY c.position",
        )
        .all(input.documentId);
      expect(rows.length).toBe(input.chunks.length);
      const expected = await embedder.embed(rows.map((r) => embeddingText("", r.content, [SLUG], new Map([[SLUG, NAME]]))));
      rows.forEach((r, i) => {
        expect(r.embedding.byteLength).toBe(embedder.dimensions * 4);
        expect([...floatsOfBlob(r.embedding)]).toEqual([...expected[i]!]);
      });
      const meta = engine.db.query<{ key: string; value: string }, []>("SELECT key, value FROM search_index_meta ORDER BY key").all();
      expect(meta).toEqual([
        { key: "dimensions", value: String(embedder.dimensions) },
        { key: "embedder_id", value: embedder.id },
      ]);
      expect(changes()).toEqual(recorded().map((r) => ({ op: "insert", chunkId: r.id })));
    });
  }

  test("writing the same text again changes nothing", async () => {
    const before = recorded();
    const seq = engineName === "postgres" ? newestSeq() : 0;
    await writer.indexDocumentChunks(input);
    expect(recorded()).toEqual(before);
    if (engineName === "postgres") expect(newestSeq()).toBe(seq);
  });

  test("changed text replaces only what changed, and a dropped passage goes", async () => {
    const before = recorded();
    const changedPosition = input.chunks[0]!.position;
    const droppedPosition = input.chunks.at(-1)!.position;
    const seq = engineName === "postgres" ? newestSeq() : 0;
    input = { ...input, chunks: input.chunks.slice(0, -1).map((c, i) => (i === 0 ? { ...c, text: NEW_TEXT } : c)) };
    await writer.indexDocumentChunks(input);
    const after = recorded();
    expect(after.map((r) => r.position)).toEqual(input.chunks.map((c) => c.position));
    expect(after[0]!.content).toBe(NEW_TEXT);
    expect(after[0]!.id).not.toBe(before[0]!.id);
    expect(after.slice(1)).toEqual(before.slice(1, -1));
    expect(indexed()).toEqual(after.map(({ id, position }) => ({ id, position })));
    expect(await sources("Zorblax escalation privacy officer board")).toContain(PDF.file);
    if (engineName === "postgres") {
      const dropped = before.find((r) => r.position === droppedPosition)!.id;
      const replaced = before.find((r) => r.position === changedPosition)!.id;
      const expected = [
        { op: "delete", chunkId: dropped },
        { op: "delete", chunkId: replaced },
        { op: "insert", chunkId: after[0]!.id },
      ];
      expect(changes(seq)).toEqual(expected.sort((a, b) => a.chunkId - b.chunkId));
    }
  });

  test("deleting the document's passages in a transaction removes them, and this node's index follows", async () => {
    const before = recorded();
    const seq = engineName === "postgres" ? newestSeq() : 0;
    immediate(engine.db, () => writer.deleteDocumentChunks(input.documentId));
    expect(recorded()).toEqual([]);
    if (engineName === "postgres") expect(changes(seq)).toEqual(before.map((r) => ({ op: "delete", chunkId: r.id })).sort((a, b) => a.chunkId - b.chunkId));
    // PostgreSQL: the catch-up started once the transaction committed.
    const deadline = Date.now() + 30_000;
    while (indexed().length > 0 && Date.now() < deadline) await Bun.sleep(20);
    expect(indexed()).toEqual([]);
    expect(await sources(PDF.sentence)).not.toContain(PDF.file);
    expect(afterWriteErrors).toEqual([]);
  });

  if (engineName === "postgres") {
    test("nothing is written for a document whose row is gone", async () => {
      const seq = newestSeq();
      engine.db.query("DELETE FROM documents WHERE id = ?").run(input.documentId);
      await writer.indexDocumentChunks(input);
      expect(recorded()).toEqual([]);
      expect(newestSeq()).toBe(seq);
    });
  }
});
