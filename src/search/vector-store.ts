/**
 * SQL for the passages' vectors: full floats (search_chunk_vectors) for re-scoring, and an
 * int8 copy per scope row in the vec0 table search_vec, partitioned by owner and cluster,
 * for the KNN shortlist (vector-knn.ts reads them).
 */
import type { Database } from "bun:sqlite";
import { nearestCentroid, type Centroids } from "./ivf";
import { recordClusterJurisdictions, UNCLUSTERED } from "./ivf-store";
import { bumpVectorGeneration } from "./meta-store";
import { ANY_JURISDICTION, orgScope } from "./scopes";
import { floatsOfBlob, placeholders } from "./sql";

export const VECTOR_TABLE = "search_vec";

/** Owner partition of the vector table: the shared corpus, or one organisation's documents. */
export const SHARED_OWNER = "shared";

/**
 * Leading dimensions the vector table's int8 copies keep, read from the table's own
 * declaration (so it is right whichever version created the table), or undefined if there is no table.
 */
export function shortlistDimensionsOf(db: Database): number | undefined {
  const sql = db.query<{ sql: string }, [string]>("SELECT sql FROM sqlite_master WHERE name = ?").get(VECTOR_TABLE)?.sql;
  const declared = sql === undefined ? undefined : /INT8\[(\d+)\]/i.exec(sql)?.[1];
  return declared === undefined ? undefined : Number(declared);
}

/**
 * An int8 copy of each vector's leading `shortlistDimensions` (unit-range scalar
 * quantization), partitioned by scope, for the KNN shortlist; full floats for re-scoring
 * live in search_chunk_vectors. Measured on this embedder (256-d, strongly anisotropic:
 * every passage shares a large common direction), sign-bit quantization kept only 26–55%
 * of the exact top 10 even with a 200-row shortlist, int8 98–100% with 20–50 rows.
 */
export function createVectorTable(db: Database, shortlistDimensions: number): void {
  const d = shortlistDimensions;
  if (!Number.isInteger(d) || d < 8 || d > 8192 || d % 8 !== 0) {
    throw new Error(`embedder shortlist dimensions must be a multiple of 8 from 8 to 8192, got ${d}`);
  }
  // Partitioned by owner (a search reads the shared partition and its own organisation's)
  // and by inverted-file cluster (a search of a large shared corpus reads only the clusters
  // nearest the query; 0 = not clustered); jurisdiction is a metadata column filtered
  // inside the KNN scan of each partition.
  db.exec(`CREATE VIRTUAL TABLE ${VECTOR_TABLE} USING vec0(
    owner TEXT PARTITION KEY,
    cluster INTEGER PARTITION KEY,
    jurisdiction TEXT,
    embedding_int8 INT8[${d}]
  )`);
  bumpVectorGeneration(db);
}

export function dropVectorTable(db: Database): void {
  db.exec(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`);
  bumpVectorGeneration(db);
}

/** Every vector row, for re-embedding (the vec0 table is recreated beside this). */
export function deleteAllVectorRows(db: Database): void {
  db.exec("DELETE FROM search_chunk_scopes");
  db.exec("DELETE FROM search_chunk_vectors");
  bumpVectorGeneration(db);
}

/** `centroids`: the shared corpus's clusters (see CentroidCache), if it is clustered. */
export function insertVectors(
  db: Database,
  centroids: Centroids | undefined,
  chunkId: number,
  ownerOrgId: string | null,
  jurisdictions: readonly string[],
  vector: Float32Array,
): void {
  db.query("INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (?, ?) ON CONFLICT (chunk_id) DO UPDATE SET embedding = excluded.embedding").run(
    chunkId,
    vector,
  );
  const scopeRow = db.query("INSERT INTO search_chunk_scopes (chunk_id, scope) VALUES (?, ?)");
  const owner = ownerOrgId ?? SHARED_OWNER;
  const slugs = ownerOrgId !== null && jurisdictions.length === 0 ? [ANY_JURISDICTION] : jurisdictions;
  // Organisations' passages stay unclustered: a search scans its own organisation's whole partition.
  const cluster = ownerOrgId !== null || centroids === undefined ? UNCLUSTERED : nearestCentroid(centroids, vector) + 1;
  const prefix = vector.slice(0, shortlistDimensionsOf(db));
  for (const slug of slugs) {
    const scope = ownerOrgId === null ? slug : orgScope(ownerOrgId, slug);
    const { lastInsertRowid } = scopeRow.run(chunkId, scope);
    insertQuantized(db, Number(lastInsertRowid), owner, cluster, slug, prefix);
  }
  if (ownerOrgId === null) recordClusterJurisdictions(db, slugs.map((jurisdiction) => ({ cluster, jurisdiction })));
  bumpVectorGeneration(db);
}

/** `prefix`: the vector's leading dimensions the table keeps (see shortlistDimensionsOf). */
export function insertQuantized(db: Database, vecRowid: number, owner: string, cluster: number, jurisdiction: string, prefix: Float32Array): void {
  db.query(
    `INSERT INTO ${VECTOR_TABLE} (rowid, owner, cluster, jurisdiction, embedding_int8) VALUES (?, ?, ?, ?, vec_quantize_int8(?, 'unit'))`,
  ).run(vecRowid, owner, cluster, jurisdiction, prefix);
}

export function deleteVectorsOfChunk(db: Database, chunkId: number): void {
  const rows = db.query<{ vec_rowid: number }, [number]>("SELECT vec_rowid FROM search_chunk_scopes WHERE chunk_id = ?").all(chunkId);
  const del = db.query(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`);
  for (const r of rows) del.run(r.vec_rowid);
  db.query("DELETE FROM search_chunk_scopes WHERE chunk_id = ?").run(chunkId);
  db.query("DELETE FROM search_chunk_vectors WHERE chunk_id = ?").run(chunkId);
  bumpVectorGeneration(db);
}

export function replaceVectorsOfChunk(
  db: Database,
  centroids: Centroids | undefined,
  chunkId: number,
  ownerOrgId: string | null,
  jurisdictions: readonly string[],
  vector: Float32Array,
): void {
  deleteVectorsOfChunk(db, chunkId);
  insertVectors(db, centroids, chunkId, ownerOrgId, jurisdictions, vector);
}

/** Full-precision embeddings of the given passages. */
export function chunkVectors(db: Database, ids: readonly number[]): Map<number, Float32Array> {
  if (ids.length === 0) return new Map();
  const rows = db
    .query<{ chunk_id: number; embedding: Uint8Array }, number[]>(`SELECT chunk_id, embedding FROM search_chunk_vectors WHERE chunk_id IN (${placeholders(ids.length)})`)
    .all(...ids);
  return new Map(rows.map((r) => [r.chunk_id, floatsOfBlob(r.embedding)]));
}
