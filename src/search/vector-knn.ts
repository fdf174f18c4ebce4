/**
 * Vector KNN inside what a search may see: an int8 shortlist from the vec0 table (vector-store.ts),
 * re-scored with full-precision cosine; or, for a small scope, exact cosine over its rows.
 */
import type { Database } from "bun:sqlite";
import { nearestCentroids, type Centroids } from "./ivf";
import { clusteredVectorCount, clustersHolding, UNCLUSTERED } from "./ivf-store";
import { orgScope, type SearchScope } from "./scopes";
import { placeholders } from "./sql";
import type { Shortlister } from "./vector-memory";
import { SHARED_OWNER, shortlistDimensionsOf, VECTOR_TABLE } from "./vector-store";

export interface VectorHit {
  chunkId: number;
  /** Cosine similarity, -1..1, higher is better. */
  similarity: number;
}

/**
 * A denser corpus has more near-ties at int8 precision, more so on an embedder's shortlist
 * prefix: over 1M vectors, 100 rows kept 98% of the exact top 10 where 50 kept 92%.
 */
const SHORTLIST_ROWS_PER_CLUSTERED_VECTOR = 100 / 1_000_000;

/**
 * KNN inside what a search may see: the shared partition filtered to `jurisdictions`, and
 * the organisation's own partition filtered to `jurisdictions` plus its documents that
 * apply everywhere. Filtering happens inside vec0's scan (metadata column), so a small
 * jurisdiction is never crowded out. `shortlist` rows by int8 distance from each partition
 * are re-scored with full-precision cosine; the best `limit` distinct passages are returned.
 *
 * Once the shared corpus is clustered, its part reads the `probes` clusters nearest the
 * query among those that hold rows of the requested jurisdictions (clusters follow
 * jurisdictions: most hold none of a narrow filter's rows, and probing them would only
 * waste the probe), each filtered by jurisdiction inside its own scan; if those hold fewer than
 * `shortlist` rows of the requested jurisdictions (a small jurisdiction), further clusters
 * are read, nearest first, until they do or none is left. A large corpus's shortlist is
 * wider (see SHORTLIST_ROWS_PER_CLUSTERED_VECTOR). `centroids`: the shared corpus's
 * clusters (see CentroidCache), if it is clustered.
 */
export function vectorSearch(
  db: Database,
  centroids: Centroids | undefined,
  query: Float32Array,
  orgId: string,
  scope: SearchScope,
  shortlist: number,
  limit: number,
  probes: number,
  /** Where the int8 shortlist comes from: a search worker's in-memory copy, else vec0's own scan. */
  shortlister: Shortlister = (...args) => knnHits(db, ...args),
): VectorHit[] {
  const rowids: number[] = [];
  // The leading dimensions the int8 copies keep, looked up once for every partition scanned.
  const prefix = query.slice(0, shortlistDimensionsOf(db));
  if (scope.allShared || scope.jurisdictions.length > 0) {
    const filter = scope.allShared ? [] : [...scope.jurisdictions];
    if (centroids === undefined) {
      rowids.push(...shortlister(prefix, SHARED_OWNER, [undefined], filter, shortlist).map((h) => h.rowid));
    } else {
      const wide = Math.max(shortlist, Math.ceil((clusteredVectorCount(db) ?? 0) * SHORTLIST_ROWS_PER_CLUSTERED_VECTOR));
      const order = probeOrder(db, centroids, query, filter);
      let read = Math.min(probes, order.length);
      // UNCLUSTERED: shared rows inserted while the corpus was too small to cluster; none after training.
      let next = [UNCLUSTERED, ...order.slice(0, read).map((c) => c + 1)];
      let found: { rowid: number; distance: number }[] = [];
      for (let batch = probes; ; batch *= 2) {
        found = found.concat(shortlister(prefix, SHARED_OWNER, next, filter, wide));
        if (found.length >= wide || read >= order.length) break;
        next = order.slice(read, read + batch).map((c) => c + 1);
        read += next.length;
      }
      found.sort((a, b) => a.distance - b.distance);
      rowids.push(...found.slice(0, wide).map((h) => h.rowid));
    }
  }
  if (scope.orgScopes.length > 0) {
    const slugs = scope.orgScopes.map((s) => s.slice(orgScope(orgId, "").length));
    rowids.push(...shortlister(prefix, orgId, [undefined], slugs, shortlist).map((h) => h.rowid));
  }
  if (rowids.length === 0) return [];
  // GROUP BY: a passage in several jurisdictions has one row per jurisdiction but counts once.
  return db
    .query<VectorHit, (Float32Array | string | number)[]>(
      `SELECT s.chunk_id AS chunkId, 1 - min(vec_distance_cosine(v.embedding, ?)) AS similarity
       FROM json_each(?) j JOIN search_chunk_scopes s ON s.vec_rowid = j.value
       JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       GROUP BY s.chunk_id ORDER BY similarity DESC LIMIT ?`,
    )
    .all(query, JSON.stringify(rowids), limit);
}

/**
 * Clusters (0-based) nearest the query first; with a jurisdiction filter, only those that
 * may hold its rows. Nothing on record for the filter (jurisdictions without clustered
 * rows): every cluster, as before the clusters' jurisdictions were recorded.
 */
function probeOrder(db: Database, centroids: Centroids, query: Float32Array, jurisdictions: readonly string[]): number[] {
  const order = nearestCentroids(centroids, query, centroids.count);
  if (jurisdictions.length === 0) return order;
  const holding = clustersHolding(db, jurisdictions);
  return holding.size === 0 ? order : order.filter((c) => holding.has(c + 1));
}

/**
 * int8 KNN in each given cluster partition of `owner` (undefined: all of the owner's
 * clusters), jurisdiction-filtered inside each scan; `shortlist` nearest rows per partition.
 * `prefix`: the query's leading dimensions the table keeps (see shortlistDimensionsOf).
 */
function knnHits(
  db: Database,
  prefix: Float32Array,
  owner: string,
  clusters: readonly (number | undefined)[],
  jurisdictions: readonly string[],
  shortlist: number,
): { rowid: number; distance: number }[] {
  const parts: string[] = [];
  const params: (Float32Array | string | number)[] = [];
  for (const cluster of clusters) {
    parts.push(
      `SELECT rowid, distance FROM ${VECTOR_TABLE} WHERE embedding_int8 MATCH vec_quantize_int8(?, 'unit') AND k = ? AND owner = ?` +
        (cluster === undefined ? "" : " AND cluster = ?") +
        (jurisdictions.length === 0 ? "" : ` AND jurisdiction IN (${placeholders(jurisdictions.length)})`),
    );
    params.push(prefix, shortlist, owner, ...(cluster === undefined ? [] : [cluster]), ...jurisdictions);
  }
  return db.query<{ rowid: number; distance: number }, (Float32Array | string | number)[]>(parts.join(" UNION ALL ")).all(...params);
}

/**
 * Exact cosine KNN over the given scopes (no quantization): the ground truth recall is
 * measured against (benchmarks and tests).
 */
export function exactVectorSearch(db: Database, query: Float32Array, scopes: readonly string[], limit: number): VectorHit[] {
  return db
    .query<VectorHit, (Float32Array | string | number)[]>(
      `SELECT s.chunk_id AS chunkId, 1 - min(vec_distance_cosine(v.embedding, ?)) AS similarity
       FROM search_chunk_scopes s JOIN search_chunk_vectors v ON v.chunk_id = s.chunk_id
       WHERE s.scope IN (${placeholders(scopes.length)})
       GROUP BY s.chunk_id ORDER BY similarity DESC LIMIT ?`,
    )
    .all(query, ...scopes, limit);
}
