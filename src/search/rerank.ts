/**
 * Stage two of a search: the learned ranker (rank/model.ts) re-scores stage one's best
 * candidates from their features (rank/features.ts).
 */
import type { Candidate, GatheredCandidates } from "./candidates";
import { dot } from "./embedder/vector";
import { candidateTextOf } from "./passage-text";
import { candidateFeatures, type FeatureVector } from "./rank/features";
import { scoreCandidate, type RankerModel } from "./rank/model";
import type { SearchIndex } from "./search-index";
import { chunkVectors } from "./vector-store";

type RankInput = Pick<GatheredCandidates, "analysed" | "mentioned" | "queryVector" | "rows" | "names">;

/** The candidates by the ranker's score, best first (ties: lower passage id first). */
export async function rerank(
  index: SearchIndex,
  candidates: readonly Candidate[],
  gathered: RankInput,
  ranker: RankerModel,
): Promise<Candidate[]> {
  return (await candidateFeatureRows(index, candidates, gathered))
    .map((r) => ({ ...r.candidate, score: scoreCandidate(ranker, r.features) }))
    .sort((a, b) => b.score - a.score || a.chunkId - b.chunkId);
}

/** Stage two's input: each candidate's features for the learned ranker (also read by scripts/fit-ranker.ts). */
export async function candidateFeatureRows(
  index: SearchIndex,
  candidates: readonly Candidate[],
  gathered: RankInput,
): Promise<{ candidate: Candidate; citationPath: string; features: FeatureVector }[]> {
  if (candidates.length === 0) return [];
  const ids = candidates.map((c) => c.chunkId);
  const rows = gathered.rows.load(ids);
  const { queryVector } = gathered;
  const vectors = queryVector === undefined ? new Map<number, Float32Array>() : chunkVectors(index.db, ids);
  const cosineOf = (id: number) => {
    const v = vectors.get(id);
    return v === undefined || queryVector === undefined ? 0 : dot(v, queryVector);
  };
  const bestCosine = Math.max(...ids.map(cosineOf));
  const headingVectors = queryVector === undefined ? [] : await index.headingVectors.of([...rows.values()]);
  const stats = index.termStatistics.current();
  const { names } = gathered;
  return candidates.flatMap((candidate) => {
    const row = rows.get(candidate.chunkId);
    if (row === undefined) return [];
    const text = candidateTextOf(row, names);
    const headingVector = headingVectors.find((h) => h.hash === row.content_hash)?.vector;
    const titleCosine = headingVector === undefined || queryVector === undefined ? 0 : dot(headingVector, queryVector);
    const signals = { cosine: cosineOf(candidate.chunkId), titleCosine, bestCosine, mentioned: gathered.mentioned };
    return [{ candidate, citationPath: row.citation_path, features: candidateFeatures(text, index.candidateFields.of(text), gathered.analysed, stats, signals) }];
  });
}
