/**
 * Fusion of the BM25 and vector rankings, plus the citation boost.
 *
 * Score (SearchMatch.score, higher is better, 0..1):
 *   hybrid = wBm25 · bm25Norm + wVector · vectorNorm
 *   bm25Norm   = the passage's BM25 / the best BM25 of this query (0 when BM25 missed it)
 *   vectorNorm = (cosine − floor) / (best cosine − floor), floor = the worst cosine among
 *                the vector candidates (0 when the vector search missed it)
 * with wBm25 + wVector = 1. When the query names one of the requested jurisdictions
 * ("New York", "GDPR"), passages of that jurisdiction get mentionBoost added and every
 * score is divided by 1 + mentionBoost, so scores stay within 0..1. A passage the query cites exactly ("Article 33", "§ 899-aa(2)")
 * scores 1 and comes first, the most specific citation first.
 * The weights were tuned on test/search-quality/questions.json (see its README).
 */
import type { FtsHit } from "./fts-store";
import type { VectorHit } from "./vector-knn";

export interface HybridWeights {
  bm25: number;
  vector: number;
}

export const DEFAULT_HYBRID_WEIGHTS: HybridWeights = { bm25: 0.6, vector: 0.4 };

export interface CitedHit {
  chunkId: number;
  /** Number of citation levels matched: "899-aa" = 1, "899-aa(2)" = 2. */
  specificity: number;
  position: number;
}

export interface RankedHit {
  chunkId: number;
  score: number;
}

export function fuse(
  bm25: readonly FtsHit[],
  vector: readonly VectorHit[],
  cited: readonly CitedHit[],
  weights: HybridWeights,
  limit: number,
  /** The query is only a citation ("Article 33"): cited passages keep document order. */
  citationOnly = false,
  /** Passages in a jurisdiction the query names get `amount` added (then rescaled to 0..1). */
  boost: { chunkIds: ReadonlySet<number>; amount: number } = { chunkIds: new Set(), amount: 0 },
): RankedHit[] {
  const scores = new Map<number, number>();
  const add = (id: number, value: number) => scores.set(id, (scores.get(id) ?? 0) + value);
  if (bm25.length > 0) {
    // bm25() is negative; the best (most negative) maps to 1.
    const best = Math.min(...bm25.map((h) => h.bm25));
    for (const h of bm25) add(h.chunkId, best < 0 ? weights.bm25 * (h.bm25 / best) : 0);
  }
  if (vector.length > 0) {
    const best = Math.max(...vector.map((h) => h.similarity));
    const floor = Math.min(...vector.map((h) => h.similarity));
    const span = best - floor;
    for (const h of vector) add(h.chunkId, span > 0 ? weights.vector * ((h.similarity - floor) / span) : weights.vector);
  }
  const scale = boost.chunkIds.size > 0 ? 1 + boost.amount : 1;
  const ranked: RankedHit[] = [...scores]
    .map(([chunkId, score]) => ({ chunkId, score: (score + (boost.chunkIds.has(chunkId) ? boost.amount : 0)) / scale }))
    .sort((a, b) => b.score - a.score || a.chunkId - b.chunkId);
  if (cited.length === 0) return ranked.slice(0, limit);

  const hybridOf = new Map(ranked.map((r) => [r.chunkId, r.score]));
  const best = new Map<number, CitedHit>();
  for (const c of cited) {
    const seen = best.get(c.chunkId);
    if (seen === undefined || c.specificity > seen.specificity) best.set(c.chunkId, c);
  }
  const citedRanked = [...best.values()]
    .sort(
      (a, b) =>
        b.specificity - a.specificity ||
        (citationOnly ? a.position - b.position : (hybridOf.get(b.chunkId) ?? 0) - (hybridOf.get(a.chunkId) ?? 0)) ||
        a.position - b.position,
    )
    .map((c) => ({ chunkId: c.chunkId, score: 1 }));
  return [...citedRanked, ...ranked.filter((r) => !best.has(r.chunkId))].slice(0, limit);
}

/** Union of two hit lists, one entry per passage (the better), best first. */
export function mergeHits<T extends { chunkId: number }>(a: readonly T[], b: readonly T[], goodness: (h: T) => number): T[] {
  const best = new Map<number, T>();
  for (const h of [...a, ...b]) {
    const seen = best.get(h.chunkId);
    if (seen === undefined || goodness(h) > goodness(seen)) best.set(h.chunkId, h);
  }
  return [...best.values()].sort((x, y) => goodness(y) - goodness(x));
}
