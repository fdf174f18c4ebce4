/**
 * The knowledge base's search: hybrid search over the shared corpus and organisations'
 * documents, and jurisdiction resolution. No billing here: callers charge. Stage one is
 * candidates.ts, stage two rerank.ts; indexing is indexing.ts, upgrades maintenance.ts.
 */
import { byteOrder, type SqlDatabase } from "../db/sql-database";
import { invalidJurisdictions } from "../errors";
import { gatherCandidates } from "./candidates";
import { jurisdictionsOfRow } from "./chunk-store";
import { fuse } from "./hybrid";
import { FOLD_PASSAGES_MAX, foldRanking } from "./rank/fold";
import { highlightsOf } from "./rank/highlights";
import { rerank } from "./rerank";
import { pageSize, type SearchMatch, type SearchMethod, type SearchRequest } from "./request";
import type { SearchDeps } from "./search-index";
import type { SearchTrace } from "./trace";
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from "./tuning";

/** Default: every jurisdiction enabled for the organisation; otherwise each must be enabled. */
export function resolveJurisdictions(deps: { db: SqlDatabase }, orgId: string, requested?: string[]): string[] {
  // Byte order on both engines, whatever PostgreSQL's collation: the list is stored with a screening.
  const enabled = deps.db
    .query<{ slug: string }, [string]>(`SELECT slug FROM organisation_jurisdictions WHERE org_id = ? ORDER BY ${byteOrder(deps.db, "slug")}`)
    .all(orgId)
    .map((r) => r.slug);
  if (requested === undefined) return enabled;
  const allowed = new Set(enabled);
  const wanted = [...new Set(requested)];
  const bad = wanted.filter((s) => !allowed.has(s));
  if (bad.length > 0) {
    throw invalidJurisdictions(`unknown or not enabled for this organisation: ${bad.slice(0, 10).join(", ")}`);
  }
  return wanted;
}

/**
 * Hybrid search: stage one gathers and fuses candidates, the best `rerankCandidates` are
 * re-scored by the learned ranker (rank/model.ts), passages the query cites exactly come
 * first, and passages of one provision are folded together. `method` lets the quality
 * benchmark measure each half alone: "bm25" ranks by the words and their expansions only,
 * "vector" by embedding similarity only.
 */
export async function searchKnowledgeBase(
  deps: SearchDeps,
  request: SearchRequest,
  tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
  method: SearchMethod = "hybrid",
  /** Records where the time goes (the search benchmark). */
  trace?: SearchTrace,
): Promise<SearchMatch[]> {
  // A search alone runs here with its vector half on a worker (both halves at once); searches
  // beside it, here or on a worker, go whole to the workers, so concurrent requests use every
  // core and this thread stays free to charge, dispatch and reply (a search here would hold
  // up every other request's next step for its whole length: measured, a third fewer paid
  // searches/s with 4 clients). One that fails there (a worker failed, or the search threw)
  // runs here, where an error keeps its type.
  const pool = deps.vectorSearchPool;
  const beside = pool !== undefined && pool.searchesHere + pool.wholeSearchesRunning > 0;
  if (pool?.runsWholeSearches && beside && tuning === DEFAULT_SEARCH_TUNING && method === "hybrid") {
    const results = await pool.searchWhole(request, trace).catch(() => undefined);
    if (results !== undefined) return results;
  }
  if (pool === undefined) return searchHere(deps, request, tuning, method, trace);
  pool.searchesHere++;
  try {
    return await searchHere(deps, request, tuning, method, trace);
  } finally {
    pool.searchesHere--;
  }
}

async function searchHere(deps: SearchDeps, request: SearchRequest, tuning: SearchTuning, method: SearchMethod, trace: SearchTrace | undefined): Promise<SearchMatch[]> {
  deps.searchIndex.assertReady();
  const topK = pageSize(request);
  const gathered = await gatherCandidates(deps, request, tuning, method, trace);
  const ranked =
    method === "hybrid" && tuning.rerank ? await rerank(deps.searchIndex, gathered.ranked.slice(0, tuning.rerankCandidates), gathered, tuning.ranker) : gathered.ranked;
  trace?.lap("rerank");
  // Cited passages first (most specific citation first), then the ranking.
  const citedIds = new Set(gathered.cited.map((c) => c.chunkId));
  const citedFirst = fuse([], [], gathered.cited, tuning.weights, gathered.cited.length, gathered.citationOnly).map((c) => c.chunkId);
  const scoreOf = new Map(ranked.map((r) => [r.chunkId, r.score]));
  const order = [...citedFirst, ...ranked.map((r) => r.chunkId).filter((id) => !citedIds.has(id))];
  const fold = tuning.fold && method === "hybrid";
  const rows = gathered.rows.load(order.slice(0, fold ? FOLD_PASSAGES_MAX * topK : topK));
  const passages = order.flatMap((id) => {
    const row = rows.get(id);
    return row === undefined
      ? []
      : [{ chunkId: id, documentId: row.document_id, position: row.position, citationPath: row.citation_path, content: row.content, cited: citedIds.has(id), row }];
  });
  const matches = fold ? foldRanking(passages, topK, { siblingGap: tuning.foldSiblingGap, deferBy: tuning.foldDeferBy }) : passages.slice(0, topK).map((p) => ({ passages: [p], citationPath: p.citationPath, content: p.content }));
  const scores = matchScores(matches.map((m) => (citedIds.has(m.passages[0]!.chunkId) ? undefined : scoreOf.get(m.passages[0]!.chunkId))));
  const results = matches.map((m, i) => {
    const row = m.passages[0]!.row;
    return {
      content: m.content,
      score: scores[i]!,
      source: row.source,
      citationPath: m.citationPath,
      jurisdictionSlugs: jurisdictionsOfRow(row),
      ...(row.title ? { title: row.title } : {}),
      highlights: highlightsOf(m.content, gathered.analysed.stems, gathered.analysed.expansions),
    };
  });
  trace?.lap("materialise");
  return results;
}

/**
 * SearchMatch.score, 0..1, higher is better: the ranker's scores through a logistic, never
 * above the match before (a fold or a deferred repeat keeps the page's order); a passage the
 * query cites (undefined here) scores 1.
 */
function matchScores(raw: readonly (number | undefined)[]): number[] {
  let ceiling = 1;
  return raw.map((s) => {
    const score = s === undefined ? 1 : Math.min(ceiling, Math.round((1 / (1 + Math.exp(-s))) * 1e6) / 1e6);
    ceiling = score;
    return score;
  });
}
