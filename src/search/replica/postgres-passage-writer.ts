/**
 * Documents' passages written to PostgreSQL, the system of record, through the synchronous
 * handle: each passage's row in search_chunks and its vector in search_chunk_vectors (the
 * little-endian float32 bytes postgres-passages.ts reads). Migration 003's triggers log
 * every change to passage_changes, and each node's replica follower (follower.ts) applies
 * them to its own index. Passages are embedded exactly as indexing.ts embeds them.
 */
import { forUpdate, type SqlDatabase } from "../../db/sql-database";
import { immediate } from "../../db/transaction";
import { CHUNK_ROW_COLUMNS, chunkRowValues, chunksOfDocument, jurisdictionNames, type NewChunk } from "../chunk-store";
import type { Embedder } from "../embedder/types";
import { chunksToIndex, documentChunksInput, embedChunks, type DocumentChunksInput } from "../indexing";
import type { PassageWriter } from "../passage-writer";

export interface PostgresPassageWriterOptions {
  db: SqlDatabase;
  /** This node's embedder; PostgreSQL's vectors must all come from one (search_index_meta). */
  embedder: Embedder;
  /** Brings this node's own index up to date with the change log (its follower's catch-up). */
  afterWrite: () => Promise<void>;
  /** A catch-up started by a deletion failed; the follower's own polling applies the change later. */
  onAfterWriteError: (error: Error) => void;
}

export class PostgresPassageWriter implements PassageWriter {
  constructor(private readonly options: PostgresPassageWriterOptions) {}

  /**
   * Embeds only passages whose content hash changed, then, in one transaction, replaces the
   * document's changed and dropped passages. Written only while the document's row exists,
   * locked meanwhile: a deletion on another node either waits and then removes these
   * passages with the row, or has already removed the row, and nothing is written. Awaits
   * this node's catch-up after commit, so the document is searchable here when this returns.
   */
  async indexDocumentChunks(input: DocumentChunksInput): Promise<void> {
    const { db, embedder } = this.options;
    const wanted = chunksToIndex(documentChunksInput(input));
    const vectors = new Map<string, Float32Array>();
    for (let attempt = 1; ; attempt++) {
      const held = new Map(chunksOfDocument(db, input.documentId).map((c) => [c.position, c.content_hash]));
      const toEmbed = wanted.filter((w) => held.get(w.position) !== w.contentHash && !vectors.has(w.contentHash));
      const embedded = await embedChunks(embedder, toEmbed, jurisdictionNames(db));
      toEmbed.forEach((c, i) => vectors.set(c.contentHash, embedded[i]!));
      const outcome = immediate(db, () => replacePassages(db, embedder, input.documentId, wanted, vectors));
      if (outcome === "written") break;
      if (outcome === "document gone") return;
      // Another attempt at this document changed its passages meanwhile: embed what is now missing.
      if (attempt >= REPLACE_ATTEMPTS_MAX) throw new Error(`the passages of document ${input.documentId} kept changing while they were written`);
    }
    await this.options.afterWrite();
  }

  /** Inside the caller's transaction when there is one; this node catches up after it commits. */
  deleteDocumentChunks(documentId: string): void {
    const { db } = this.options;
    const removed = db.query("DELETE FROM search_chunks WHERE document_id = ?").run(documentId).changes;
    if (removed === 0) return;
    // A microtask runs once the synchronous caller, and so its transaction, has finished.
    queueMicrotask(() => {
      this.options.afterWrite().catch((error: Error) => this.options.onAfterWriteError(error));
    });
  }

  settled(): Promise<void> {
    return this.options.afterWrite();
  }
}

/** Rounds of embed-then-write at most; each further round follows another attempt's concurrent write. */
const REPLACE_ATTEMPTS_MAX = 3;

/**
 * Under the document's row lock: drops passages no longer wanted or changed, inserts the
 * changed ones with their vectors (by content hash). Writes nothing when a vector is
 * missing (the passages changed since they were read) or the document is gone.
 */
function replacePassages(
  db: SqlDatabase,
  embedder: Embedder,
  documentId: string,
  wanted: readonly NewChunk[],
  vectors: ReadonlyMap<string, Float32Array>,
): "written" | "vectors missing" | "document gone" {
  if (!db.query(`SELECT 1 FROM documents WHERE id = ?${forUpdate(db)}`).get(documentId)) return "document gone";
  const existing = new Map(chunksOfDocument(db, documentId).map((c) => [c.position, c]));
  const changed = wanted.filter((w) => existing.get(w.position)?.content_hash !== w.contentHash);
  if (changed.some((c) => !vectors.has(c.contentHash))) return "vectors missing";
  if (changed.length > 0) recordEmbedder(db, embedder);
  const wantedPositions = new Set(wanted.map((w) => w.position));
  const changedPositions = new Set(changed.map((c) => c.position));
  for (const e of existing.values()) {
    if (!wantedPositions.has(e.position) || changedPositions.has(e.position)) deletePassage(db, e.id);
  }
  for (const c of changed) insertPassage(db, c, vectors.get(c.contentHash)!);
  return "written";
}

/** Records this node's embedder for PostgreSQL's vectors, or refuses if they are another's. */
function recordEmbedder(db: SqlDatabase, embedder: Embedder): void {
  const record = db.query("INSERT INTO search_index_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING");
  record.run("embedder_id", embedder.id);
  record.run("dimensions", String(embedder.dimensions));
  const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM search_index_meta WHERE key IN ('embedder_id', 'dimensions')").all();
  const stored = new Map(rows.map((r) => [r.key, r.value]));
  if (stored.get("embedder_id") !== embedder.id || stored.get("dimensions") !== String(embedder.dimensions)) {
    throw new Error(
      `PostgreSQL's passage vectors were made by embedder ${stored.get("embedder_id")} (${stored.get("dimensions")}-d), ` +
        `not this node's ${embedder.id} (${embedder.dimensions}-d): configure the same embedder on every node`,
    );
  }
}

/** Its vector goes with it (foreign key cascade); the trigger logs a 'delete'. */
function deletePassage(db: SqlDatabase, id: number): void {
  db.query("DELETE FROM search_chunks WHERE id = ?").run(id);
}

function insertPassage(db: SqlDatabase, chunk: NewChunk, vector: Float32Array): void {
  const { id } = db
    .query<{ id: number }, (string | number | null)[]>(`INSERT INTO search_chunks (${CHUNK_ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`)
    .get(...chunkRowValues(chunk))!;
  db.query("INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (?, ?)").run(id, littleEndianBytes(vector));
}

/** float32s in little-endian order, as SQLite's search_chunk_vectors holds them. */
function littleEndianBytes(vector: Float32Array): Uint8Array {
  const bytes = new Uint8Array(vector.length * 4);
  const view = new DataView(bytes.buffer);
  vector.forEach((v, i) => view.setFloat32(i * 4, v, true));
  return bytes;
}
