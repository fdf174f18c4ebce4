/**
 * Rewrites of the whole vec0 table from the stored float vectors (nothing is re-embedded):
 * to another shortlist width, or into inverted-file clusters. Each runs in one
 * transaction: under WAL, searches meanwhile read the previous layout, never a mixture.
 */
import type { Database } from "bun:sqlite";
import { nearestCentroid, trainCentroids } from "./ivf";
import { recordClusterJurisdictions, saveCentroids, type CentroidCache, sharedRowsAfter, sharedVectorCount, UNCLUSTERED } from "./ivf-store";
import { bumpVectorGeneration } from "./meta-store";
import { orgScope } from "./scopes";
import { floatsOfBlob, REBUILD_BATCH_ROWS } from "./sql";
import { createVectorTable, dropVectorTable, insertQuantized, SHARED_OWNER, shortlistDimensionsOf, VECTOR_TABLE } from "./vector-store";

export interface ClusterOptions {
  clusters: number;
  /** Vectors the centroids are trained on (every n-th row, so the same index gives the same sample). */
  sampleVectors: number;
  rounds: number;
  batchVectors: number;
  seed: number;
}

/**
 * Trains centroids over the shared corpus's vectors and moves every shared vector into the
 * partition of its nearest centroid.
 */
export function clusterSharedVectors(db: Database, dimensions: number, options: ClusterOptions): { vectors: number; clusters: number } {
  const total = sharedVectorCount(db);
  const stride = Math.max(1, Math.floor(total / options.sampleVectors));
  const sample: Float32Array[] = [];
  for (let after = 0, seen = 0; ; ) {
    const rows = sharedRowsAfter(db, after, REBUILD_BATCH_ROWS);
    if (rows.length === 0) break;
    for (const r of rows) if (seen++ % stride === 0) sample.push(floatsOfBlob(r.embedding));
    after = rows[rows.length - 1]!.vecRowid;
  }
  const centroids = trainCentroids(sample, dimensions, options);
  db.transaction(() => {
    saveCentroids(db, centroids, dimensions, total);
    const del = db.query(`DELETE FROM ${VECTOR_TABLE} WHERE rowid = ?`);
    const kept = shortlistDimensionsOf(db);
    const pairs = new Map<string, { cluster: number; jurisdiction: string }>();
    for (let after = 0; ; ) {
      const rows = sharedRowsAfter(db, after, REBUILD_BATCH_ROWS);
      if (rows.length === 0) break;
      for (const r of rows) {
        const vector = floatsOfBlob(r.embedding);
        const cluster = nearestCentroid(centroids, vector) + 1;
        del.run(r.vecRowid);
        insertQuantized(db, r.vecRowid, SHARED_OWNER, cluster, r.scope, vector.slice(0, kept));
        pairs.set(`${cluster} ${r.scope}`, { cluster, jurisdiction: r.scope });
      }
      after = rows[rows.length - 1]!.vecRowid;
    }
    recordClusterJurisdictions(db, pairs.values());
    bumpVectorGeneration(db);
  }).immediate();
  return { vectors: total, clusters: centroids.count };
}

/**
 * Recreates the vector table with int8 copies of `shortlistDimensions` leading dimensions;
 * shared vectors keep their clusters.
 */
export function rebuildVectorTable(db: Database, centroidCache: CentroidCache, shortlistDimensions: number): { vectors: number } {
  let vectors = 0;
  db.transaction(() => {
    dropVectorTable(db);
    createVectorTable(db, shortlistDimensions);
    const centroids = centroidCache.current();
    for (let after = 0; ; ) {
      const rows = db
        .query<{ vecRowid: number; scope: string; ownerOrgId: string | null; embedding: Uint8Array }, [number, number]>(
          `SELECT s.vec_rowid AS vecRowid, s.scope AS scope, c.owner_org_id AS ownerOrgId, v.embedding AS embedding
           FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id JOIN search_chunks c ON c.id = s.chunk_id
           WHERE s.vec_rowid > ? ORDER BY s.vec_rowid LIMIT ?`,
        )
        .all(after, REBUILD_BATCH_ROWS);
      if (rows.length === 0) break;
      for (const r of rows) {
        const vector = floatsOfBlob(r.embedding);
        const prefix = vector.slice(0, shortlistDimensions);
        if (r.ownerOrgId === null) {
          const cluster = centroids === undefined ? UNCLUSTERED : nearestCentroid(centroids, vector) + 1;
          insertQuantized(db, r.vecRowid, SHARED_OWNER, cluster, r.scope, prefix);
        } else {
          insertQuantized(db, r.vecRowid, r.ownerOrgId, UNCLUSTERED, r.scope.slice(orgScope(r.ownerOrgId, "").length), prefix);
        }
      }
      vectors += rows.length;
      after = rows[rows.length - 1]!.vecRowid;
    }
  }).immediate();
  return { vectors };
}
