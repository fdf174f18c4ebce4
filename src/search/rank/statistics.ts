/**
 * Term statistics of the BM25 index for the ranker's BM25F: passage count, per-term passage
 * counts (fts5vocab over search_fts) and mean field lengths, cached per database until
 * passages are added.
 */
import type { Database } from "bun:sqlite";
import { termsOf } from "../text/tokens";
import type { TermStatistics } from "./features";

/** Passages tokenised to estimate mean field lengths: enough for a stable mean, cheap to read. */
const LENGTH_SAMPLE_PASSAGES = 2_000;
/** Terms whose counts are remembered per database state. */
const TERM_COUNTS_CACHED_MAX = 50_000;

interface Cached {
  newestChunkId: number;
  stats: TermStatistics;
}
const cache = new WeakMap<Database, Cached>();

export function termStatistics(db: Database, newestChunkId: number): TermStatistics {
  const hit = cache.get(db);
  if (hit !== undefined && hit.newestChunkId === newestChunkId) return hit.stats;
  const passages = db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n;
  const sample = db
    .query<{ citation_path: string; source: string; heading: string; content: string }, [number]>(
      "SELECT citation_path, source, heading, content FROM search_chunks ORDER BY id DESC LIMIT ?",
    )
    .all(LENGTH_SAMPLE_PASSAGES);
  const mean = (f: (r: (typeof sample)[number]) => string) => sample.reduce((sum, r) => sum + termsOf(f(r)).length, 0) / Math.max(1, sample.length);
  const counts = new Map<string, number>();
  const lookup = db.query<{ doc: number }, [string]>("SELECT doc FROM search_fts_vocab WHERE term = ?");
  const stats: TermStatistics = {
    passages,
    // The citation field also holds the jurisdiction's name (a word or two).
    averageTokens: { citation: mean((r) => `${r.source} ${r.citation_path}`) + 2, heading: mean((r) => r.heading), body: mean((r) => r.content) },
    documentFrequency(term) {
      let n = counts.get(term);
      if (n === undefined) {
        n = lookup.get(term)?.doc ?? 0;
        if (counts.size >= TERM_COUNTS_CACHED_MAX) counts.clear();
        counts.set(term, n);
      }
      return n;
    },
  };
  cache.set(db, { newestChunkId, stats });
  return stats;
}
