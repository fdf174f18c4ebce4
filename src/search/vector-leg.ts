/**
 * The vector half of a hybrid search as one self-contained task: plain data in, hits out,
 * so it runs the same on the request's thread or on a search worker's own connection.
 */
import type { Database } from "bun:sqlite";
import { mergeHits } from "./hybrid";
import type { CentroidCache } from "./ivf-store";
import type { VectorMemory } from "./vector-memory";
import type { SearchScope } from "./scopes";
import { vectorSearch, type VectorHit } from "./vector-knn";

export interface VectorTask {
  queryVector: Float32Array;
  orgId: string;
  scope: SearchScope;
  /** What this search may read of the jurisdictions the query names (see mentions.ts). */
  focus?: SearchScope;
  shortlist: number;
  limit: number;
  probes: number;
}

/** A connection to search, with its centroids: the request's SearchIndex, or a worker's own (with its in-memory vectors). */
export interface VectorReader {
  db: Database;
  centroids: CentroidCache;
  vectorMemory?: VectorMemory;
}

/**
 * The nearest passages in the search's scope, and in the jurisdictions the query names: a
 * second search within them (its clusters, then the float re-score), so their passages join
 * the candidates even if the whole-scope search missed them. Both use the worker's in-memory
 * copy when it is loaded, else vec0's scan, which gives the very same rows: a search's
 * results never depend on which thread ran it.
 */
export function vectorCandidates({ db, centroids: centroidCache, vectorMemory }: VectorReader, task: VectorTask): VectorHit[] {
  const { queryVector, orgId, shortlist, limit, probes } = task;
  const centroids = centroidCache.current();
  const inMemory = vectorMemory?.shortlister();
  const hits = vectorSearch(db, centroids, queryVector, orgId, task.scope, shortlist, limit, probes, inMemory);
  if (task.focus === undefined) return hits;
  const focused = vectorSearch(db, centroids, queryVector, orgId, task.focus, shortlist, limit, probes, inMemory);
  return mergeHits(hits, focused, (h) => h.similarity);
}
