/**
 * The index's own settings (search_index_meta): which embedder made its vectors, the IVF
 * training in use, and which one-off upgrades are done.
 */
import type { Database } from "bun:sqlite";
import { uuidv7 } from "../ids";

/** Set once every organisation passage's BM25 row carries the organisation-passage token (scopes.ts). */
export const ORGANISATION_PASSAGES_MARKED = "fts_organisation_token";

/**
 * Changes (a fresh id) whenever a vector row is written or deleted, or the vector table is
 * rebuilt: the search workers' in-memory copies (vector-memory.ts) compare it per search.
 */
export const VECTOR_GENERATION = "vector_generation";

/**
 * Changes (a fresh id) whenever a BM25 row is written or deleted: the in-memory term
 * index (bm25/term-index.ts) compares it per search.
 */
export const BM25_GENERATION = "bm25_generation";

/** The passage count when the BM25 index was last merged into one segment (maintenance step 6). */
export const BM25_MERGED_PASSAGES = "bm25_merged_passages";

export function bumpVectorGeneration(db: Database): void {
  writeMetaValue(db, VECTOR_GENERATION, uuidv7());
}

export function bumpBm25Generation(db: Database): void {
  writeMetaValue(db, BM25_GENERATION, uuidv7());
}

export interface IndexMeta {
  embedderId: string;
  dimensions: number;
}

export function readIndexMeta(db: Database): IndexMeta | undefined {
  const rows = db.query<{ key: string; value: string }, []>("SELECT key, value FROM search_index_meta").all();
  const map = new Map(rows.map((r) => [r.key, r.value]));
  const embedderId = map.get("embedder_id");
  const dimensions = Number(map.get("dimensions"));
  return embedderId === undefined || !Number.isInteger(dimensions) ? undefined : { embedderId, dimensions };
}

export function writeIndexMeta(db: Database, meta: IndexMeta): void {
  writeMetaValue(db, "embedder_id", meta.embedderId);
  writeMetaValue(db, "dimensions", String(meta.dimensions));
}

export function readMetaValue(db: Database, key: string): string | undefined {
  return db.query<{ value: string }, [string]>("SELECT value FROM search_index_meta WHERE key = ?").get(key)?.value;
}

export function writeMetaValue(db: Database, key: string, value: string): void {
  db.query("INSERT INTO search_index_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
}

export function deleteMetaValues(db: Database, keys: readonly string[]): void {
  const del = db.query("DELETE FROM search_index_meta WHERE key = ?");
  for (const key of keys) del.run(key);
}

/** Forgets every setting: the index then has no embedder until one is written again (see reembedAll). */
export function clearIndexMeta(db: Database): void {
  db.exec("DELETE FROM search_index_meta");
}
