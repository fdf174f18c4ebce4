/**
 * Inverted-file clusters of the shared corpus (ivf.ts trains them): the centroids, the
 * training they came from, and the shared vectors they cluster.
 */
import type { Database } from "bun:sqlite";
import { uuidv7 } from "../ids";
import { makeCentroids, type Centroids } from "./ivf";
import { deleteMetaValues, readMetaValue, writeMetaValue } from "./meta-store";
import { floatsOfBlob } from "./sql";

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
