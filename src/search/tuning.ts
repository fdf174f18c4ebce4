/** The knobs of a search's ranking, and their defaults. */
import type { FtsWeights } from "./fts-store";
import { DEFAULT_HYBRID_WEIGHTS, type HybridWeights } from "./hybrid";
import { EXPANSION_SOURCES, type ExpansionSource } from "./lexicon";
import { DEFAULT_RANKER, type RankerModel } from "./rank/model";

export interface SearchTuning {
  weights: HybridWeights;
  /** Added to the fused score of passages in a jurisdiction the query names (see mentions.ts). */
  mentionBoost: number;
  fts: FtsWeights;
  /** Candidates taken from each of BM25 and the vector search before fusion. */
  candidatesPerMethod: number;
  /**
   * Rows taken by int8 distance from each partition before full-precision re-scoring
   * (at least 2 × topK; widened for large corpora, see vectorSearch). vec0's top-k cost
   * grows with k; int8 keeps 98–100% of the exact top 10 within 20–50 rows on the default
   * embedder up to 100k passages.
   */
  vectorShortlist: number;
  /**
   * Inverted-file clusters of the shared corpus read per search, nearest the query first
   * (only once the corpus is clustered, see IVF_VECTORS_MIN).
   */
  vectorProbes: number;
  /** Sources of the vocabulary bridge a query expands through ([]: the query's own words only). */
  expansionSources: readonly ExpansionSource[];
  /** Candidates taken by BM25 over the query's expansions. */
  expansionCandidates: number;
  /** Stage-one candidates the learned ranker re-scores. */
  rerankCandidates: number;
  ranker: RankerModel;
  /** Re-score stage one's best candidates with `ranker` (off: the fixed fusion is the ranking). */
  rerank: boolean;
  /** Boost passages of a jurisdiction the query names. */
  mentions: boolean;
  /** Fold passages of one provision together (rank/fold.ts). */
  fold: boolean;
  /** How far down the ranking a sibling may be and still join its neighbour's fold (rank/fold.ts). */
  foldSiblingGap: number;
  /** Matches a repeat of a provision already shown moves down. */
  foldDeferBy: number;
}

export const DEFAULT_SEARCH_TUNING: SearchTuning = {
  weights: DEFAULT_HYBRID_WEIGHTS,
  mentionBoost: 0.3,
  fts: { citation: 4, heading: 4, body: 1 },
  candidatesPerMethod: 100,
  vectorShortlist: 50,
  vectorProbes: 20,
  expansionSources: EXPANSION_SOURCES,
  expansionCandidates: 50,
  rerankCandidates: 60,
  ranker: DEFAULT_RANKER,
  rerank: true,
  mentions: true,
  fold: true,
  foldSiblingGap: 2,
  foldDeferBy: 1,
};
