/**
 * The vector half of a hybrid search as one self-contained task: plain data in, hits out,
 * so it runs the same on the request's thread or on a search worker's own connection.
 */
import type { Database } from "bun:sqlite";
import { mergeHits } from "./hybrid";
import type { CentroidCache } from "./ivf-store";
import type { VectorMemory } from "./vector-memory";
import { scopeRowCount, scopesOfSearch, type SearchScope } from "./scopes";
import { exactVectorSearch, vectorSearch, type VectorHit } from "./vector-knn";

export interface VectorTask {
  queryVector: Float32Array;
  orgId: string;
  scope: SearchScope;
  /** Jurisdictions the query names, and what of them this search may read (see mentions.ts). */
  focus?: { jurisdictions: string[]; scope: SearchScope };
  shortlist: number;
  limit: number;
  probes: number;
}

/**
 * A named jurisdiction's passages usually number a few thousand at most: without the
 * in-memory copy, scoring them exactly through the scope index beats a second vec0 scan,
 * whose cost grows with the whole shared partition. Past this many rows the quantized KNN
 * is cheaper again. With the copy, its int8 scan of the clusters that hold the jurisdiction
 * (every one, at the default probes) and the float re-score of the shortlist are cheaper
 * still, and find nearly the same passages (docs/benchmarks.md).
 */
const FOCUS_EXACT_SCAN_ROWS_MAX = 3_000;

/** A connection to search, with its centroids: the request's SearchIndex, or a worker's own (with its in-memory vectors). */
export interface VectorReader {
  db: Database;
  centroids: CentroidCache;
  vectorMemory?: VectorMemory;
}

export function vectorCandidates({ db, centroids: centroidCache, vectorMemory }: VectorReader, task: VectorTask): VectorHit[] {
  const { queryVector, orgId, shortlist, limit, probes } = task;
  const centroids = centroidCache.current();
  const inMemory = vectorMemory?.shortlister();
  const hits = vectorSearch(db, centroids, queryVector, orgId, task.scope, shortlist, limit, probes, inMemory);
  if (task.focus === undefined) return hits;
  // The named jurisdictions' passages join the candidates even if the whole-scope KNN missed them.
  const scopes = scopesOfSearch(orgId, task.focus.jurisdictions);
  const focused =
    inMemory === undefined && scopeRowCount(db, scopes, FOCUS_EXACT_SCAN_ROWS_MAX + 1) <= FOCUS_EXACT_SCAN_ROWS_MAX
      ? exactVectorSearch(db, queryVector, scopes, limit)
      : vectorSearch(db, centroids, queryVector, orgId, task.focus.scope, shortlist, limit, probes, inMemory);
  return mergeHits(hits, focused, (h) => h.similarity);
}
