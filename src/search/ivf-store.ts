/**
 * Inverted-file clusters of the shared corpus (ivf.ts trains them): the centroids, the
 * training they came from, and the shared vectors they cluster.
 */
import type { Database } from "bun:sqlite";
import { uuidv7 } from "../ids";
import { makeCentroids, type Centroids } from "./ivf";
import { deleteMetaValues, readMetaValue, writeMetaValue } from "./meta-store";
import { floatsOfBlob, placeholders } from "./sql";

/** Cluster partition of vectors scanned whole. */
export const UNCLUSTERED = 0;

/**
 * The centroids of one connection's index, kept until the training's id changes, so a
 * retrain (by this process or another) is seen at the next read.
 */
export class CentroidCache {
  #loaded: { ivfId: string | undefined; centroids: Centroids | undefined } | undefined;

  constructor(private readonly db: Database) {}

  /** The centroids in use, or undefined while the shared corpus is not clustered. */
  current(): Centroids | undefined {
    const ivfId = readMetaValue(this.db, "ivf_id");
    if (this.#loaded !== undefined && this.#loaded.ivfId === ivfId) return this.#loaded.centroids;
    const centroids = ivfId === undefined ? undefined : loadCentroids(this.db);
    this.#loaded = { ivfId, centroids };
    return centroids;
  }
}

function loadCentroids(db: Database): Centroids | undefined {
  const rows = db.query<{ centroid: Uint8Array }, []>("SELECT centroid FROM search_ivf_centroids ORDER BY cluster").all();
  if (rows.length === 0) return undefined;
  const first = floatsOfBlob(rows[0]!.centroid);
  const values = new Float32Array(rows.length * first.length);
  rows.forEach((r, i) => values.set(floatsOfBlob(r.centroid), i * first.length));
  return makeCentroids(values, first.length);
}

/** Replaces the centroids by a new training over `vectors` shared vectors; cluster c is stored as c + 1. */
export function saveCentroids(db: Database, centroids: Centroids, dimensions: number, vectors: number): void {
  clearCentroids(db);
  const insert = db.query("INSERT INTO search_ivf_centroids (cluster, centroid) VALUES (?, ?)");
  for (let c = 0; c < centroids.count; c++) insert.run(c + 1, centroids.values.slice(c * dimensions, (c + 1) * dimensions));
  writeMetaValue(db, "ivf_id", uuidv7());
  writeMetaValue(db, "ivf_vectors", String(vectors));
}

/** Forgets the centroids (re-embedding makes them meaningless); vectors inserted next stay unclustered. */
export function clearCentroids(db: Database): void {
  db.exec("DELETE FROM search_ivf_centroids");
  db.exec("DELETE FROM search_ivf_cluster_jurisdictions");
  deleteMetaValues(db, ["ivf_id", "ivf_vectors"]);
}

/** Shared vectors counted when the centroids were trained, or undefined if there are none. */
export function clusteredVectorCount(db: Database): number | undefined {
  const value = readMetaValue(db, "ivf_vectors");
  return value === undefined ? undefined : Number(value);
}

/** Rows of the shared partition (one per passage × jurisdiction). */
export function sharedVectorCount(db: Database): number {
  return db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunk_scopes WHERE scope < 'org:' OR scope >= 'org;'").get()!.n;
}

/** Shared rows in vec_rowid order, with their float vectors, `limit` at a time. */
export function sharedRowsAfter(db: Database, afterRowid: number, limit: number): { vecRowid: number; scope: string; embedding: Uint8Array }[] {
  return db
    .query<{ vecRowid: number; scope: string; embedding: Uint8Array }, [number, number]>(
      `SELECT s.vec_rowid AS vecRowid, s.scope AS scope, v.embedding AS embedding
       FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       WHERE s.vec_rowid > ? AND (s.scope < 'org:' OR s.scope >= 'org;') ORDER BY s.vec_rowid LIMIT ?`,
    )
    .all(afterRowid, limit);
}

/** Notes that `cluster` (stored number, 1-based) holds shared vectors of these jurisdictions. */
export function recordClusterJurisdictions(db: Database, pairs: Iterable<{ cluster: number; jurisdiction: string }>): void {
  const insert = db.query("INSERT OR IGNORE INTO search_ivf_cluster_jurisdictions (jurisdiction, cluster) VALUES (?, ?)");
  for (const p of pairs) if (p.cluster !== UNCLUSTERED) insert.run(p.jurisdiction, p.cluster);
}

/**
 * Every cluster's jurisdictions, read from the vector table itself: for an index clustered
 * before they were recorded (maintenance does this once; a full scan of the shared rows).
 */
export function recordClusterJurisdictionsFromVectors(db: Database, vectorTable: string, sharedOwner: string): number {
  const pairs = db
    .query<{ cluster: number; jurisdiction: string }, [string, number]>(`SELECT DISTINCT cluster, jurisdiction FROM ${vectorTable} WHERE owner = ? AND cluster <> ?`)
    .all(sharedOwner, UNCLUSTERED);
  recordClusterJurisdictions(db, pairs);
  return pairs.length;
}

/** Whether the clusters' jurisdictions are on record (none are before the first clustering). */
export function clusterJurisdictionsRecorded(db: Database): boolean {
  return db.query<{ one: number }, []>("SELECT 1 AS one FROM search_ivf_cluster_jurisdictions LIMIT 1").get() !== null;
}

/** Clusters (stored numbers) that may hold shared vectors of any of these jurisdictions. */
export function clustersHolding(db: Database, jurisdictions: readonly string[]): Set<number> {
  if (jurisdictions.length === 0) return new Set();
  const rows = db
    .query<{ cluster: number }, string[]>(`SELECT DISTINCT cluster FROM search_ivf_cluster_jurisdictions WHERE jurisdiction IN (${placeholders(jurisdictions.length)})`)
    .all(...jurisdictions);
  return new Set(rows.map((r) => r.cluster));
}
