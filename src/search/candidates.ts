/**
 * Stage one of a search: the candidates BM25 (the query's words, then their expansions),
 * the vector KNN and the query's exact citations find, fused with fixed weights.
 */
import { citationsInQuery } from "./citations";
import { citationLookup, jurisdictionNames, SearchRows } from "./chunk-store";
import { bm25WithinEach } from "./bm25/within";
import type { FtsHit, FtsWeights } from "./fts-store";
import { fuse, mergeHits, type CitedHit } from "./hybrid";
import type { ExpansionSource } from "./lexicon";
import { mentionedJurisdictions } from "./mentions";
import { candidateTextOf } from "./passage-text";
import { commonTermsConjunction, ftsMatchExpression, queryTerms } from "./query-text";
import { analyseQuery, type AnalysedQuery } from "./rank/analyse";
import { pageSize, SEARCH_JURISDICTIONS_MAX, SEARCH_QUERY_CHARS_MAX, type SearchMethod, type SearchRequest } from "./request";
import { chunksInScopes, orgScope, resolveSearchScope, scopesOfSearch, type SearchScope } from "./scopes";
import type { SearchDeps, SearchIndex } from "./search-index";
import type { SearchTrace } from "./trace";
import type { SearchTuning } from "./tuning";
import { vectorCandidates, type VectorTask } from "./vector-leg";

/**
 * BM25 candidates from each scope, merged. A query made only of common terms requires all
 * of them (see ftsMatchExpression); if fewer than `wanted` passages have them all, any of
 * them will do, at the cost of scoring most of the index.
 */
export function bm25Search(
  index: SearchIndex,
  query: string,
  scopes: readonly SearchScope[],
  weights: FtsWeights,
  candidates: number,
  /** Fewer hits than this for a query of common terms alone: fall back to any of them. */
  wanted: number,
): FtsHit[] {
  // `allOf`: the phrases `match` requires all of, which the in-memory term index may answer instead of FTS5 (same hits).
  const search = (match: string, allOf?: readonly string[]) => {
    const fromTerms = scopes.map((s) => (allOf ? index.bm25Terms.searchAllOf(allOf, s, weights, candidates) : undefined));
    const fromFts = bm25WithinEach(index, match, scopes.filter((_, i) => fromTerms[i] === undefined), weights, candidates);
    return fromTerms.map((hits) => hits ?? fromFts.shift()!).reduce((a, b) => mergeHits(a, b, (h) => -h.bm25));
  };
  const { isCommon } = index.termStatistics.current();
  const match = ftsMatchExpression(query, isCommon);
  if (match === undefined) return [];
  const hits = search(match, commonTermsConjunction(query, isCommon));
  // Only a query of common terms alone requires every term, so only it can come back short for that.
  if (hits.length >= wanted || !queryTerms(query).every(isCommon)) return hits;
  return search(ftsMatchExpression(query)!);
}

/** A candidate passage on its way through the ranking. */
export interface Candidate {
  chunkId: number;
  /** Stage-one score: the fixed fusion of the normalised BM25 and vector scores (hybrid.ts). */
  fused: number;
  score: number;
}

/** What stage one found for a query: everything the ranker and the presentation need. */
export interface GatheredCandidates {
  analysed: AnalysedQuery;
  /** Jurisdictions the query names, among those it may read. */
  mentioned: string[];
  /** The query's embedding. */
  queryVector: Float32Array | undefined;
  /** Best first by the fixed fusion. */
  ranked: Candidate[];
  cited: CitedHit[];
  /** The query is nothing but a citation ("Article 33"): cited passages keep document order. */
  citationOnly: boolean;
  /** Passage rows read so far by this search, for the stages after this one. */
  rows: SearchRows;
  /** Jurisdiction names by slug, as this search read them. */
  names: Map<string, string>;
}

/**
 * Stage one: BM25 (the query's words, then their expansions) and vector KNN over exactly
 * the partitions the organisation may read, fused with fixed weights; plus the passages the
 * query cites exactly.
 */
export async function gatherCandidates(
  deps: SearchDeps,
  request: SearchRequest,
  tuning: SearchTuning,
  method: SearchMethod,
  trace?: SearchTrace,
): Promise<GatheredCandidates> {
  const index = deps.searchIndex;
  const asked = request.query.slice(0, SEARCH_QUERY_CHARS_MAX);
  const topK = pageSize(request);
  const jurisdictions = request.jurisdictions.slice(0, SEARCH_JURISDICTIONS_MAX);
  const candidates = Math.max(tuning.candidatesPerMethod, topK);

  // A jurisdiction named in the query ("Ohioans", "GDPR") among several it may read: its
  // passages join the candidates even if the whole-corpus rankings missed them, and its
  // name joins the query's words ("Ohioans" → "Ohio"), as the passages write it. Only
  // within `jurisdictions`: a name never widens a filter or reaches a jurisdiction the
  // organisation has not enabled.
  const names = jurisdictionNames(index.db);
  const rows = new SearchRows(index.db);
  const mentioned = tuning.mentions && jurisdictions.length > 1 ? mentionedJurisdictions(asked, names, jurisdictions) : [];
  const query = mentioned.length === 0 ? asked : `${asked} (${mentioned.map((slug) => names.get(slug) ?? slug).join(", ")})`;
  const analysed = analyseQuery(query, deps.lexicon, new Set(tuning.expansionSources));
  trace?.lap("analysis");
  const scope = resolveSearchScope(index.db, request.orgId, jurisdictions);
  const focus = mentioned.length > 0 ? resolveSearchScope(index.db, request.orgId, mentioned) : undefined;
  trace?.lap("scope");

  // The vector half goes to a search worker first, so it runs while this thread scores BM25.
  let task: VectorTask | undefined;
  if (method !== "bm25") {
    const shortlist = Math.max(tuning.vectorShortlist, 2 * topK);
    const queryVector = (await index.embedder.embed([query]))[0]!;
    trace?.lap("embedding");
    task = {
      queryVector,
      orgId: request.orgId,
      scope,
      focus,
      shortlist,
      limit: Math.min(candidates, shortlist),
      probes: tuning.vectorProbes,
    };
  }
  // Never rejects (a failed worker yields undefined), so nothing is left unhandled if BM25 throws.
  const inWorker = task && deps.vectorSearchPool?.search(task, trace).catch(() => undefined);
  const within = [scope, ...(focus ? [focus] : [])];
  // Alone, BM25 must fill the page; in the hybrid, a query of common terms that few passages
  // hold all of leaves the rest to the vector half and the expansions, not to an OR that
  // would score most of the index.
  const bm25 = method === "vector" ? [] : bm25Search(index, query, within, tuning.fts, candidates, method === "bm25" ? topK : 0);
  trace?.lap("bm25");
  const expansionMatch = method === "vector" ? undefined : expansionMatchExpression(analysed, index.termStatistics.current().isCommon);
  const expanded =
    expansionMatch === undefined
      ? []
      : bm25WithinEach(index, expansionMatch, within, tuning.fts, tuning.expansionCandidates).reduce((a, b) => mergeHits(a, b, (h) => -h.bm25));
  trace?.lap("bm25Expansions");
  // While the worker still searches vectors, this thread tokenises the best lexical candidates for stage two.
  if (inWorker !== undefined && method === "hybrid" && tuning.rerank) {
    const ids = mergeHits(bm25, expanded, (h) => -h.bm25).slice(0, Math.ceil(tuning.rerankCandidates / 2)).map((h) => h.chunkId);
    for (const row of rows.load(ids).values()) index.candidateFields.prepare(candidateTextOf(row, names));
    trace?.lap("prepareRerank");
  }
  // A worker that failed (the pool logged why) leaves the vector half to this thread.
  const vector = task === undefined ? [] : ((await inWorker) ?? vectorCandidates(index, task));
  trace?.lap("vectorWait");

  let cited: CitedHit[] = [];
  let citationOnly = false;
  if (method === "hybrid") {
    const specificity = new Map<string, number>();
    for (const c of citationsInQuery(query)) c.keys.forEach((k, i) => specificity.set(k, Math.max(specificity.get(k) ?? 0, i + 1)));
    // The scopes (two per jurisdiction) are spelt out only for a query that cites something.
    const keys = [...specificity.keys()];
    cited = (keys.length === 0 ? [] : citationLookup(index.db, keys, scopesOfSearch(request.orgId, jurisdictions))).map((h) => ({
      chunkId: h.chunkId,
      specificity: specificity.get(h.key) ?? 1,
      position: h.position,
    }));
    // "Article 33" or "§ 899-aa(2)" alone: nothing but the citation and its code name.
    citationOnly = cited.length > 0 && queryTerms(query.replace(/\b(?:article|art\.?|section|sec\.?)\b|§/gi, " ")).every((t) => /\d/.test(t) || t.length <= 4);
  }
  trace?.lap("citations");
  const weights = method === "bm25" ? { bm25: 1, vector: 0 } : method === "vector" ? { bm25: 0, vector: 1 } : tuning.weights;
  const lexical = mergeHits(bm25, expanded.map((h) => ({ ...h, bm25: h.bm25 * EXPANSION_STAGE_ONE_WEIGHT })), (h) => -h.bm25);
  // Passages of a jurisdiction the query names get the mention boost (hybrid.ts).
  const boosted = method !== "hybrid" || mentioned.length === 0 ? new Set<number>() : chunksInScopes(index.db, [...new Set([...lexical, ...vector].map((h) => h.chunkId))], [...mentioned, ...mentioned.map((slug) => orgScope(request.orgId, slug))]);
  const ranked = fuse(lexical, vector, [], weights, Number.MAX_SAFE_INTEGER, false, { chunkIds: boosted, amount: tuning.mentionBoost }).map((r) => ({
    chunkId: r.chunkId,
    fused: r.score,
    score: r.score,
  }));
  trace?.lap("fusion");
  return { analysed, mentioned, queryVector: task?.queryVector, ranked, cited, citationOnly, rows, names };
}

/** Expansions' BM25 counts for less than the user's own words when the candidates are first fused. */
const EXPANSION_STAGE_ONE_WEIGHT = 0.5;

/** Expansions (the strongest) that bring candidates of their own: each one is a posting list FTS5 merges. */
const EXPANSION_CANDIDATE_TERMS_MAX = 8;

/** Expansion sources that bring candidates of their own; the others only weigh in on candidates found otherwise. */
const CANDIDATE_SOURCES: ReadonlySet<ExpansionSource> = new Set(["glossary", "wordnet-derivation", "definition"]);

/**
 * FTS5 MATCH for the query's expansions that bring candidates: each quoted, a phrase where it
 * has several words. An expansion in a large share of the index ("controller", "personal
 * data" over a big corpus) would make FTS5 score most of it and ranks little: it is left out
 * here, and still weighs in on the candidates the other searches find.
 */
function expansionMatchExpression(analysed: AnalysedQuery, isCommon: (term: string) => boolean): string | undefined {
  const terms = analysed.expansions
    .filter((e) => CANDIDATE_SOURCES.has(e.source) && !e.text.split(" ").every(isCommon))
    .slice(0, EXPANSION_CANDIDATE_TERMS_MAX)
    .map((e) => `"${e.text.replace(/["']/g, " ")}"`);
  return terms.length === 0 ? undefined : terms.join(" OR ");
}
