/** SQL for the passages themselves (search_chunks) and their citation keys. */
import type { Database } from "bun:sqlite";
import type { SqlDatabase } from "../db/sql-database";
import { placeholders } from "./sql";

export interface ChunkRow {
  id: number;
  document_id: string;
  owner_org_id: string | null;
  position: number;
  source: string;
  citation_path: string;
  heading: string;
  title: string;
  content: string;
  jurisdiction_slugs: string;
  content_hash: string;
}

export interface NewChunk {
  documentId: string;
  ownerOrgId: string | null;
  position: number;
  source: string;
  citationPath: string;
  heading: string;
  title: string;
  content: string;
  jurisdictions: string[];
  contentHash: string;
}

export function jurisdictionsOfRow(row: Pick<ChunkRow, "jurisdiction_slugs">): string[] {
  return JSON.parse(row.jurisdiction_slugs) as string[];
}

export function chunksOfDocument(db: SqlDatabase, documentId: string): Pick<ChunkRow, "id" | "position" | "content_hash">[] {
  return db
    .query<Pick<ChunkRow, "id" | "position" | "content_hash">, [string]>(
      "SELECT id, position, content_hash FROM search_chunks WHERE document_id = ? ORDER BY position",
    )
    .all(documentId);
}

/** The id of the passage at a document's position, if any. */
export function chunkIdAt(db: Database, documentId: string, position: number): number | undefined {
  return db.query<{ id: number }, [string, number]>("SELECT id FROM search_chunks WHERE document_id = ? AND position = ?").get(documentId, position)?.id;
}

/** A passage's stored fields, in the order of CHUNK_ROW_COLUMNS: the one row shape on both engines. */
export const CHUNK_ROW_COLUMNS = "document_id, owner_org_id, position, source, citation_path, heading, title, content, jurisdiction_slugs, content_hash";

export function chunkRowValues(chunk: NewChunk): (string | number | null)[] {
  return [
    chunk.documentId,
    chunk.ownerOrgId,
    chunk.position,
    chunk.source,
    chunk.citationPath,
    chunk.heading,
    chunk.title,
    chunk.content,
    JSON.stringify(chunk.jurisdictions),
    chunk.contentHash,
  ];
}

/**
 * The passage's row; its BM25 row, citation keys and vectors are written beside it (see
 * indexing.ts). `id`: the system of record's id (a replica keeps PostgreSQL's), else a new one.
 */
export function insertChunkRow(db: Database, chunk: NewChunk, id: number | null = null): number {
  const { lastInsertRowid } = db
    .query(`INSERT INTO search_chunks (id, ${CHUNK_ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
    .run(id, ...chunkRowValues(chunk));
  return Number(lastInsertRowid);
}

export function insertCitationKeys(db: Database, chunkId: number, citationKeys: readonly string[]): void {
  const key = db.query("INSERT OR IGNORE INTO search_citation_keys (citation_key, chunk_id) VALUES (?, ?)");
  for (const k of citationKeys) key.run(k, chunkId);
}

/** The passage's row (its citation keys go with it). */
export function deleteChunkRow(db: Database, chunkId: number): void {
  db.query("DELETE FROM search_chunks WHERE id = ?").run(chunkId);
}

/** Highest passage id: changes whenever passages are added, so it keys caches of index statistics. */
export function newestChunkId(db: Database): number {
  return db.query<{ id: number | null }, []>("SELECT max(id) AS id FROM search_chunks").get()!.id ?? 0;
}

export function countChunks(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n;
}

/** Batches of passages in id order, for re-embedding: (id > afterId) LIMIT n. */
export function chunkBatch(db: Database, afterId: number, limit: number): ChunkRow[] {
  return db.query<ChunkRow, [number, number]>("SELECT * FROM search_chunks WHERE id > ? ORDER BY id LIMIT ?").all(afterId, limit);
}

/** Batches of organisations' passages in id order: (id > afterId) LIMIT n. */
export function organisationChunkBatch(db: Database, afterId: number, limit: number): ChunkRow[] {
  return db
    .query<ChunkRow, [number, number]>("SELECT * FROM search_chunks WHERE owner_org_id IS NOT NULL AND id > ? ORDER BY id LIMIT ?")
    .all(afterId, limit);
}

export function loadChunks(db: Database, ids: readonly number[]): Map<number, ChunkRow> {
  if (ids.length === 0) return new Map();
  const rows = db.query<ChunkRow, number[]>(`SELECT * FROM search_chunks WHERE id IN (${placeholders(ids.length)})`).all(...ids);
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * One search's passage rows, each read once however many stages need it (stage two's
 * tokenising ahead, its features, the reply): loaded on first request, kept for the search.
 */
export class SearchRows {
  readonly #rows = new Map<number, ChunkRow>();

  constructor(private readonly db: Database) {}

  /** The rows of `ids` that exist, by id. */
  load(ids: readonly number[]): Map<number, ChunkRow> {
    const missing = ids.filter((id) => !this.#rows.has(id));
    for (const [id, row] of loadChunks(this.db, missing)) this.#rows.set(id, row);
    const found = new Map<number, ChunkRow>();
    for (const id of ids) {
      const row = this.#rows.get(id);
      if (row !== undefined) found.set(id, row);
    }
    return found;
  }
}

/** Passages within `scopes` that carry any of the citation keys. */
export function citationLookup(db: Database, keys: readonly string[], scopes: readonly string[]): { chunkId: number; key: string; position: number }[] {
  if (keys.length === 0) return [];
  return db
    .query<{ chunkId: number; key: string; position: number }, string[]>(
      `SELECT k.chunk_id AS chunkId, k.citation_key AS key, c.position AS position
       FROM search_citation_keys k JOIN search_chunks c ON c.id = k.chunk_id
       WHERE k.citation_key IN (${placeholders(keys.length)})
         AND EXISTS (SELECT 1 FROM search_chunk_scopes s WHERE s.chunk_id = k.chunk_id AND +s.scope IN (${placeholders(scopes.length)}))`,
    )
    .all(...keys, ...scopes);
}

export function jurisdictionNames(db: SqlDatabase): Map<string, string> {
  const rows = db.query<{ slug: string; name: string }, []>("SELECT slug, name FROM jurisdictions").all();
  return new Map(rows.map((r) => [r.slug, r.name]));
}
