/**
 * The knowledge-base index of one database connection, with its embedder and every cache
 * that depends on what that database holds. Built once per connection (src/deps.ts) and
 * passed to searches, indexing and maintenance; nothing about an index lives in module
 * state. A search worker thread keeps its own CentroidCache for its own connection.
 */
import type { Database } from "bun:sqlite";
import type { Embedder } from "./embedder/types";
import { HeadingVectorCache } from "./heading-vectors";
import { CentroidCache } from "./ivf-store";
import type { Lexicon } from "./lexicon";
import { FieldCache } from "./rank/features";
import { TermStatisticsCache } from "./rank/statistics";
import type { VectorSearchPool } from "./vector-pool";

export class SearchIndex {
  /** The shared corpus's IVF centroids, reloaded after a retrain. */
  readonly centroids: CentroidCache;
  /** BM25 term statistics, recomputed after passages are added. */
  readonly termStatistics: TermStatisticsCache;
  /** Heading embeddings (by this index's embedder) for the ranker. */
  readonly headingVectors: HeadingVectorCache;
  /** Candidate passages' tokenised fields for the ranker. */
  readonly candidateFields = new FieldCache();
  /** The embedder signature ensureSearchIndex last prepared this index for. */
  preparedFor: string | undefined;

  constructor(
    readonly db: Database,
    readonly embedder: Embedder,
  ) {
    this.centroids = new CentroidCache(db);
    this.termStatistics = new TermStatisticsCache(db);
    this.headingVectors = new HeadingVectorCache(embedder);
  }
}

/** What the search capability needs from Deps. */
export interface SearchDeps {
  searchIndex: SearchIndex;
  /** Runs the vector half of searches on worker threads; without it, on the caller's thread. */
  vectorSearchPool?: VectorSearchPool;
  /** The vocabulary bridge for query expansion; without it a search uses the query's own words only. */
  lexicon?: Lexicon;
}
