/**
 * The knowledge base: hybrid search over the shared corpus and organisations' documents,
 * jurisdiction resolution, and indexing of passages. No billing here: callers charge.
 */
import type { Database } from "bun:sqlite";
import { invalidJurisdictions } from "../errors";
import { citationKeysOfPath, citationsInQuery } from "./citations";
import type { Embedder } from "./embedder/types";
import { DEFAULT_HYBRID_WEIGHTS, fuse, mergeHits, type CitedHit, type HybridWeights } from "./hybrid";
import { mentionedJurisdictions } from "./mentions";
import { ftsMatchExpression, queryTerms } from "./query-text";
import { EXPANSION_SOURCES, type ExpansionSource, type Lexicon } from "./lexicon";
import { analyseQuery, type AnalysedQuery } from "./rank/analyse";
import { candidateFeatures, prepareCandidate, type CandidateText, type FeatureVector } from "./rank/features";
import { FOLD_PASSAGES_MAX, foldRanking } from "./rank/fold";
import { highlightsOf, type Highlights } from "./rank/highlights";
import { DEFAULT_RANKER, scoreCandidate, type RankerModel } from "./rank/model";
import { termStatistics } from "./rank/statistics";
import {
  chunkBatch,
  chunksOfDocument,
  clearCentroids,
  clusteredVectorCount,
  clusterSharedVectors,
  sharedVectorCount,
  countChunks,
  createVectorTable,
  deleteChunk,
  citationLookup,
  chunksInScopes,
  orgScope,
  chunkVectors,
  dropVectorTable,
  ftsSearch,
  insertChunk,
  jurisdictionNames,
  loadChunks,
  readIndexMeta,
  rebuildVectorTable,
  replaceVectorsOfChunk,
  rewriteOrganisationFtsRows,
  shortlistDimensionsOf,
  resolveSearchScope,
  scopesOfSearch,
  vectorTableExists,
  writeIndexMeta,
  type FtsHit,
  type FtsText,
  type SearchScope,
  type FtsWeights,
  type NewChunk,
  type ChunkRow,
} from "./store";
import { vectorCandidates, type VectorTask } from "./vector-leg";
import type { VectorSearchPool } from "./vector-pool";

/** What the search capability needs from Deps. */
export interface SearchDeps {
  db: Database;
  embedder: Embedder;
  /** Runs the vector half of searches on worker threads; without it, on the caller's thread. */
  vectorSearchPool?: VectorSearchPool;
  /** The vocabulary bridge for query expansion; without it a search uses the query's own words only. */
  lexicon?: Lexicon;
}

export interface SearchMatch {
  content: string;
  score: number;
  source?: string;
  citationPath?: string;
  jurisdictionSlugs?: string[];
  /** The provision's title, when it has one. */
  title?: string;
  highlights?: Highlights;
}

export const SEARCH_QUERY_CHARS_MAX = 1000;
export const SEARCH_TOP_K_MAX = 50;
export const SEARCH_TOP_K_DEFAULT = 10;
export const SEARCH_JURISDICTIONS_MAX = 200;

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
  vectorProbes: 16,
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

export type SearchMethod = "hybrid" | "bm25" | "vector";

export interface SearchRequest {
  orgId: string;
  query: string;
  jurisdictions: string[];
  topK: number;
}

// ---------- jurisdictions ----------

/** Default: every jurisdiction enabled for the organisation; otherwise each must be enabled. */
export function resolveJurisdictions(deps: Pick<SearchDeps, "db">, orgId: string, requested?: string[]): string[] {
  const enabled = deps.db
    .query<{ slug: string }, [string]>("SELECT slug FROM organisation_jurisdictions WHERE org_id = ? ORDER BY slug")
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

// ---------- index lifecycle ----------

const prepared = new WeakMap<Database, string>();

/**
 * Makes sure the vector table matches the embedder. An empty index adopts the embedder;
 * an index built with another model or dimension must be re-embedded (`regkb corpus
 * re-embed`) because its vectors are not comparable with the new query vectors. A table
 * whose int8 copies keep other leading dimensions than the embedder's shortlist (made by
 * an earlier version) is rebuilt from the stored vectors; `regkb serve` does this before
 * it listens. Returns the vectors rebuilt, if any.
 */
/** The index holds passages embedded by another model than the configured one (see ensureSearchIndex). */
export function indexNeedsReembedding(deps: SearchDeps): boolean {
  const meta = readIndexMeta(deps.db);
  return meta !== undefined && (meta.embedderId !== deps.embedder.id || meta.dimensions !== deps.embedder.dimensions) && countChunks(deps.db) > 0;
}

export function ensureSearchIndex(deps: SearchDeps): { rebuiltVectors?: number } {
  const signature = `${deps.embedder.id}/${deps.embedder.dimensions}/${deps.embedder.shortlistDimensions}`;
  if (prepared.get(deps.db) === signature) return {};
  const meta = readIndexMeta(deps.db);
  const matches = meta?.embedderId === deps.embedder.id && meta.dimensions === deps.embedder.dimensions;
  if (!matches || !vectorTableExists(deps.db)) {
    if (meta !== undefined && !matches && countChunks(deps.db) > 0) {
      throw new Error(
        `the search index was built with embedder ${meta.embedderId} (${meta.dimensions}-d) but ${deps.embedder.id} (${deps.embedder.dimensions}-d) is configured; run \`regkb corpus re-embed\``,
      );
    }
    deps.db.transaction(() => {
      dropVectorTable(deps.db);
      createVectorTable(deps.db, deps.embedder.shortlistDimensions);
      clearCentroids(deps.db);
      writeIndexMeta(deps.db, { embedderId: deps.embedder.id, dimensions: deps.embedder.dimensions });
    }).immediate();
  }
  let rebuiltVectors: number | undefined;
  if (shortlistDimensionsOf(deps.db) !== deps.embedder.shortlistDimensions) {
    rebuiltVectors = rebuildVectorTable(deps.db, deps.embedder.shortlistDimensions).vectors;
  }
  markOrganisationPassages(deps.db);
  prepared.set(deps.db, signature);
  return { rebuiltVectors };
}

/**
 * BM25 rows of organisation passages written before they carried the organisation-passage
 * token get it, once: a search of the whole shared corpus relies on it to leave other
 * organisations' passages out.
 */
function markOrganisationPassages(db: Database): void {
  const done = db.query<{ value: string }, []>("SELECT value FROM search_index_meta WHERE key = 'fts_organisation_token'").get();
  if (done !== null) return;
  db.transaction(() => {
    const names = jurisdictionNames(db);
    rewriteOrganisationFtsRows(db, (c) => ftsText({ ...c, citationPath: c.citation_path, jurisdictions: JSON.parse(c.jurisdiction_slugs) as string[] }, names));
    db.query("INSERT INTO search_index_meta (key, value) VALUES ('fts_organisation_token', '1')").run();
  }).immediate();
}

/**
 * Below this many shared vectors a search scans them all (measured: 100k rows, ~40 ms
 * p50); from here on they are split into inverted-file clusters and a search reads the
 * nearest few. Retrained when the corpus has grown IVF_RETRAIN_GROWTH-fold since.
 */
export const IVF_VECTORS_MIN = 50_000;
const IVF_RETRAIN_GROWTH = 4;
/**
 * √n/4 clusters of ~4√n rows each, at most 256: assigning every vector costs clusters ×
 * dimensions multiply-adds in JS (256 × 256-d: ~33 µs a vector, ~35 s per million).
 */
export function ivfClusterCount(vectors: number): number {
  return Math.max(16, Math.min(256, Math.round(Math.sqrt(vectors) / 4)));
}

/** Clusters the shared corpus's vectors once there are enough of them, or enough more. */
export function clusterVectorsIfGrown(deps: SearchDeps): { vectors: number; clusters: number } | undefined {
  const vectors = sharedVectorCount(deps.db);
  const trained = clusteredVectorCount(deps.db);
  if (vectors < IVF_VECTORS_MIN || (trained !== undefined && vectors < IVF_RETRAIN_GROWTH * trained)) return undefined;
  const clusters = ivfClusterCount(vectors);
  return clusterSharedVectors(deps.db, deps.embedder.dimensions, {
    clusters,
    sampleVectors: 64 * clusters,
    rounds: 40,
    batchVectors: 1024,
    seed: 1,
  });
}

export interface ReembedProgress {
  doneChunks: number;
  totalChunks: number;
}

const REEMBED_BATCH_CHUNKS = 256;

/** Rebuilds every vector with the configured embedder, then records it as the index's model. */
export async function reembedAll(deps: SearchDeps, onProgress?: (p: ReembedProgress) => void): Promise<{ chunks: number }> {
  const total = countChunks(deps.db);
  const names = jurisdictionNames(deps.db);
  deps.db.transaction(() => {
    dropVectorTable(deps.db);
    createVectorTable(deps.db, deps.embedder.shortlistDimensions);
    deps.db.exec("DELETE FROM search_chunk_scopes");
    deps.db.exec("DELETE FROM search_chunk_vectors");
    clearCentroids(deps.db);
    // Written last, after every vector, so an interrupted run is detected and repeated.
    deps.db.exec("DELETE FROM search_index_meta");
  }).immediate();
  prepared.delete(deps.db);
  let afterId = 0;
  let done = 0;
  for (;;) {
    const batch = chunkBatch(deps.db, afterId, REEMBED_BATCH_CHUNKS);
    if (batch.length === 0) break;
    const vectors = await deps.embedder.embed(
      batch.map((c) => embeddingText(c.heading, c.content, JSON.parse(c.jurisdiction_slugs) as string[], names)),
    );
    deps.db.transaction(() => batch.forEach((c, i) => replaceVectorsOfChunk(deps.db, c, vectors[i]!))).immediate();
    afterId = batch[batch.length - 1]!.id;
    done += batch.length;
    onProgress?.({ doneChunks: done, totalChunks: total });
  }
  clusterVectorsIfGrown(deps);
  writeIndexMeta(deps.db, { embedderId: deps.embedder.id, dimensions: deps.embedder.dimensions });
  return { chunks: done };
}

// ---------- indexing ----------

export interface PassageInput {
  source: string;
  citationPath: string;
  heading?: string;
  title?: string;
  text: string;
  position: number;
}

export interface IndexDocumentInput {
  documentId: string;
  /** null for the shared corpus. */
  ownerOrgId: string | null;
  jurisdictions: string[];
  passages: PassageInput[];
}

export interface IndexDocumentResult {
  added: number;
  unchanged: number;
  removed: number;
}

/** Embedding batch size: bounds memory and gives progress a steady beat. */
const EMBED_BATCH_TEXTS = 64;

/** The text a passage is embedded as: where it applies and what it is about, then the words. */
function embeddingText(heading: string, content: string, jurisdictions: readonly string[], names: Map<string, string>): string {
  const where = jurisdictions.map((s) => names.get(s) ?? s).join(", ");
  return [where, heading, content].filter((s) => s !== "").join("\n");
}

/** BM25 columns of a passage: where it applies (names and slugs), its source and citation; heading; text. */
function ftsText(chunk: Pick<NewChunk, "jurisdictions" | "source" | "citationPath" | "heading" | "content">, names: Map<string, string>): FtsText {
  const where = chunk.jurisdictions.map((s) => `${names.get(s) ?? ""} ${s}`).join(" ");
  return { citation: `${where} ${chunk.source} ${chunk.citationPath}`, heading: chunk.heading, body: chunk.content };
}

function contentHash(chunk: Omit<NewChunk, "contentHash">): string {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(JSON.stringify([chunk.ownerOrgId, chunk.source, chunk.citationPath, chunk.heading, chunk.content, chunk.jurisdictions]));
  return hasher.digest("hex");
}

/**
 * Replaces a document's passages in the index, re-embedding only passages whose content
 * hash changed: importing the same document twice writes nothing.
 */
export async function indexDocument(
  deps: SearchDeps,
  input: IndexDocumentInput,
  onEmbedded?: (passages: number) => void,
): Promise<IndexDocumentResult> {
  ensureSearchIndex(deps);
  const names = jurisdictionNames(deps.db);
  const wanted = input.passages.map((p): NewChunk => {
    const base = {
      documentId: input.documentId,
      ownerOrgId: input.ownerOrgId,
      position: p.position,
      source: p.source,
      citationPath: p.citationPath,
      heading: p.heading ?? "",
      title: p.title ?? "",
      content: p.text,
      jurisdictions: [...new Set(input.jurisdictions)].sort(),
    };
    return { ...base, contentHash: contentHash(base) };
  });
  const existing = new Map(chunksOfDocument(deps.db, input.documentId).map((c) => [c.position, c]));
  const changed = wanted.filter((w) => existing.get(w.position)?.content_hash !== w.contentHash);
  const wantedPositions = new Set(wanted.map((w) => w.position));
  const changedPositions = new Set(changed.map((c) => c.position));
  const stale = [...existing.values()].filter((e) => !wantedPositions.has(e.position) || changedPositions.has(e.position));

  const vectors: Float32Array[] = [];
  for (let i = 0; i < changed.length; i += EMBED_BATCH_TEXTS) {
    const batch = changed.slice(i, i + EMBED_BATCH_TEXTS);
    vectors.push(...(await deps.embedder.embed(batch.map((c) => embeddingText(c.heading, c.content, c.jurisdictions, names)))));
    onEmbedded?.(batch.length);
  }
  deps.db.transaction(() => {
    for (const s of stale) deleteChunk(deps.db, s.id);
    changed.forEach((c, i) => {
      insertChunk(deps.db, c, ftsText(c, names), citationKeysOfPath(c.citationPath), vectors[i]!);
    });
  }).immediate();
  // Only the shared corpus is clustered, and only its import (a CLI command) pays for training.
  if (input.ownerOrgId === null && changed.length > 0) clusterVectorsIfGrown(deps);
  const removed = [...existing.keys()].filter((p) => !wantedPositions.has(p)).length;
  return { added: changed.length, unchanged: wanted.length - changed.length, removed };
}

/** Contract for the documents capability: an organisation's uploaded document becomes searchable. */
export async function indexDocumentChunks(
  deps: SearchDeps,
  input: { documentId: string; orgId: string; jurisdictions: string[]; source: string; chunks: { text: string; citationPath: string; position: number }[] },
): Promise<void> {
  await indexDocument(deps, {
    documentId: input.documentId,
    ownerOrgId: input.orgId,
    jurisdictions: input.jurisdictions,
    passages: input.chunks.map((c) => ({ source: input.source, citationPath: c.citationPath, text: c.text, position: c.position })),
  });
}

/** Removes every passage of a document (vectors, BM25 rows, citation keys). */
export function deleteDocumentChunks(deps: Pick<SearchDeps, "db">, documentId: string): void {
  deps.db.transaction(() => {
    for (const c of chunksOfDocument(deps.db, documentId)) deleteChunk(deps.db, c.id);
  }).immediate();
}

// ---------- search ----------

/**
 * BM25 candidates from each scope, merged. A query made only of common terms requires all
 * of them (see ftsMatchExpression); if fewer than `wanted` passages have them all, any of
 * them will do, at the cost of scoring most of the index.
 */
function bm25Search(
  db: Database,
  query: string,
  scopes: readonly SearchScope[],
  weights: FtsWeights,
  candidates: number,
  /** Fewer hits than this for a query of common terms alone: fall back to any of them. */
  wanted: number,
): FtsHit[] {
  const search = (match: string) =>
    scopes.map((s) => ftsSearch(db, match, s, weights, candidates)).reduce((a, b) => mergeHits(a, b, (h) => -h.bm25));
  const { isCommon } = termStatistics(db);
  const match = ftsMatchExpression(query, isCommon);
  if (match === undefined) return [];
  const hits = search(match);
  // Only a query of common terms alone requires every term, so only it can come back short for that.
  if (hits.length >= wanted || !queryTerms(query).every(isCommon)) return hits;
  return search(ftsMatchExpression(query)!);
}

/** A candidate passage on its way through the ranking. */
interface Candidate {
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
}

/**
 * Stage one: BM25 (the query's words, then their expansions) and vector KNN over exactly
 * the partitions the organisation may read, fused with fixed weights; plus the passages the
 * query cites exactly.
 */
export async function gatherCandidates(deps: SearchDeps, request: SearchRequest, tuning: SearchTuning, method: SearchMethod): Promise<GatheredCandidates> {
  const asked = request.query.slice(0, SEARCH_QUERY_CHARS_MAX);
  const topK = Math.max(1, Math.min(SEARCH_TOP_K_MAX, request.topK));
  const jurisdictions = request.jurisdictions.slice(0, SEARCH_JURISDICTIONS_MAX);
  const candidates = Math.max(tuning.candidatesPerMethod, topK);

  // A jurisdiction named in the query ("Ohioans", "GDPR") among several it may read: its
  // passages join the candidates even if the whole-corpus rankings missed them, and its
  // name joins the query's words ("Ohioans" → "Ohio"), as the passages write it. Only
  // within `jurisdictions`: a name never widens a filter or reaches a jurisdiction the
  // organisation has not enabled.
  const names = jurisdictionNames(deps.db);
  const mentioned = tuning.mentions && jurisdictions.length > 1 ? mentionedJurisdictions(asked, names, jurisdictions) : [];
  const query = mentioned.length === 0 ? asked : `${asked} (${mentioned.map((slug) => names.get(slug) ?? slug).join(", ")})`;
  const analysed = analyseQuery(query, deps.lexicon, new Set(tuning.expansionSources));
  const scope = resolveSearchScope(deps.db, request.orgId, jurisdictions);
  const focus = mentioned.length > 0 ? resolveSearchScope(deps.db, request.orgId, mentioned) : undefined;

  // The vector half goes to a search worker first, so it runs while this thread scores BM25.
  let task: VectorTask | undefined;
  if (method !== "bm25") {
    const shortlist = Math.max(tuning.vectorShortlist, 2 * topK);
    task = {
      queryVector: (await deps.embedder.embed([query]))[0]!,
      orgId: request.orgId,
      scope,
      focus: focus === undefined ? undefined : { jurisdictions: mentioned, scope: focus },
      shortlist,
      limit: Math.min(candidates, shortlist),
      probes: tuning.vectorProbes,
    };
  }
  // Never rejects (a failed worker yields undefined), so nothing is left unhandled if BM25 throws.
  const inWorker = task && deps.vectorSearchPool?.search(task).catch(() => undefined);
  const within = [scope, ...(focus ? [focus] : [])];
  // Alone, BM25 must fill the page; in the hybrid, a query of common terms that few passages
  // hold all of leaves the rest to the vector half and the expansions, not to an OR that
  // would score most of the index.
  const bm25 = method === "vector" ? [] : bm25Search(deps.db, query, within, tuning.fts, candidates, method === "bm25" ? topK : 0);
  const expansionMatch = method === "vector" ? undefined : expansionMatchExpression(analysed, termStatistics(deps.db).isCommon);
  const expanded =
    expansionMatch === undefined
      ? []
      : within.map((s) => ftsSearch(deps.db, expansionMatch, s, tuning.fts, tuning.expansionCandidates)).reduce((a, b) => mergeHits(a, b, (h) => -h.bm25));
  // While the worker still searches vectors, this thread tokenises the best lexical candidates for stage two.
  if (inWorker !== undefined && method === "hybrid" && tuning.rerank) {
    const ids = mergeHits(bm25, expanded, (h) => -h.bm25).slice(0, Math.ceil(tuning.rerankCandidates / 2)).map((h) => h.chunkId);
    for (const row of loadChunks(deps.db, ids).values()) prepareCandidate(candidateTextOf(row, names));
  }
  // A worker that failed (the pool logged why) leaves the vector half to this thread.
  const vector = task === undefined ? [] : ((await inWorker) ?? vectorCandidates(deps.db, task));

  let cited: CitedHit[] = [];
  let citationOnly = false;
  if (method === "hybrid") {
    const specificity = new Map<string, number>();
    for (const c of citationsInQuery(query)) c.keys.forEach((k, i) => specificity.set(k, Math.max(specificity.get(k) ?? 0, i + 1)));
    cited = citationLookup(deps.db, [...specificity.keys()], scopesOfSearch(request.orgId, jurisdictions)).map((h) => ({
      chunkId: h.chunkId,
      specificity: specificity.get(h.key) ?? 1,
      position: h.position,
    }));
    // "Article 33" or "§ 899-aa(2)" alone: nothing but the citation and its code name.
    citationOnly = cited.length > 0 && queryTerms(query.replace(/\b(?:article|art\.?|section|sec\.?)\b|§/gi, " ")).every((t) => /\d/.test(t) || t.length <= 4);
  }
  const weights = method === "bm25" ? { bm25: 1, vector: 0 } : method === "vector" ? { bm25: 0, vector: 1 } : tuning.weights;
  const lexical = mergeHits(bm25, expanded.map((h) => ({ ...h, bm25: h.bm25 * EXPANSION_STAGE_ONE_WEIGHT })), (h) => -h.bm25);
  // Passages of a jurisdiction the query names get the mention boost (hybrid.ts).
  const boosted = method !== "hybrid" || mentioned.length === 0 ? new Set<number>() : chunksInScopes(deps.db, [...new Set([...lexical, ...vector].map((h) => h.chunkId))], [...mentioned, ...mentioned.map((slug) => orgScope(request.orgId, slug))]);
  const ranked = fuse(lexical, vector, [], weights, Number.MAX_SAFE_INTEGER, false, { chunkIds: boosted, amount: tuning.mentionBoost }).map((r) => ({
    chunkId: r.chunkId,
    fused: r.score,
    score: r.score,
  }));
  return { analysed, mentioned, queryVector: task?.queryVector, ranked, cited, citationOnly };
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
): Promise<SearchMatch[]> {
  ensureSearchIndex(deps);
  const topK = Math.max(1, Math.min(SEARCH_TOP_K_MAX, request.topK));
  const gathered = await gatherCandidates(deps, request, tuning, method);
  let ranked = gathered.ranked;
  if (method === "hybrid" && tuning.rerank) {
    ranked = (await candidateFeatureRows(deps, ranked.slice(0, tuning.rerankCandidates), gathered))
      .map((r) => ({ ...r.candidate, score: scoreCandidate(tuning.ranker, r.features) }))
      .sort((a, b) => b.score - a.score || a.chunkId - b.chunkId);
  }
  // Cited passages first (most specific citation first), then the ranking.
  const citedIds = new Set(gathered.cited.map((c) => c.chunkId));
  const citedFirst = fuse([], [], gathered.cited, tuning.weights, gathered.cited.length, gathered.citationOnly).map((c) => c.chunkId);
  const scoreOf = new Map(ranked.map((r) => [r.chunkId, r.score]));
  const order = [...citedFirst, ...ranked.map((r) => r.chunkId).filter((id) => !citedIds.has(id))];
  const fold = tuning.fold && method === "hybrid";
  const rows = loadChunks(deps.db, order.slice(0, fold ? FOLD_PASSAGES_MAX * topK : topK));
  const passages = order.flatMap((id) => {
    const row = rows.get(id);
    return row === undefined
      ? []
      : [{ chunkId: id, documentId: row.document_id, position: row.position, citationPath: row.citation_path, content: row.content, cited: citedIds.has(id), row }];
  });
  const matches = fold ? foldRanking(passages, topK, { siblingGap: tuning.foldSiblingGap, deferBy: tuning.foldDeferBy }) : passages.slice(0, topK).map((p) => ({ passages: [p], citationPath: p.citationPath, content: p.content }));
  const scores = matchScores(matches.map((m) => (citedIds.has(m.passages[0]!.chunkId) ? undefined : scoreOf.get(m.passages[0]!.chunkId))));
  return matches.map((m, i) => {
    const row = m.passages[0]!.row;
    return {
      content: m.content,
      score: scores[i]!,
      source: row.source,
      citationPath: m.citationPath,
      jurisdictionSlugs: JSON.parse(row.jurisdiction_slugs) as string[],
      ...(row.title ? { title: row.title } : {}),
      highlights: highlightsOf(m.content, gathered.analysed.stems, gathered.analysed.expansions),
    };
  });
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

/** Embeddings of passage headings: a heading is embedded once per process. */
const HEADING_VECTORS_CACHED_MAX = 20_000;
const headingVectorCache = new Map<string, Float32Array>();

async function headingEmbeddings(embedder: Embedder, rows: readonly ChunkRow[]): Promise<{ hash: string; vector: Float32Array }[]> {
  // Keyed by the heading itself: every passage of a provision shares it.
  const headingOf = (r: ChunkRow) => r.heading || r.citation_path;
  const key = (r: ChunkRow) => `${embedder.id}\n${headingOf(r)}`;
  const missing = [...new Map(rows.filter((r) => !headingVectorCache.has(key(r))).map((r) => [key(r), r])).values()];
  if (missing.length > 0) {
    const vectors = await embedder.embed(missing.map(headingOf));
    if (headingVectorCache.size + missing.length > HEADING_VECTORS_CACHED_MAX) headingVectorCache.clear();
    missing.forEach((r, i) => headingVectorCache.set(key(r), vectors[i]!));
  }
  return rows.map((r) => ({ hash: r.content_hash, vector: headingVectorCache.get(key(r))! }));
}

/** A passage's fields as the ranker's BM25F reads them (the same as its BM25 row's). */
function candidateTextOf(row: ChunkRow, names: Map<string, string>): CandidateText {
  const jurisdictions = JSON.parse(row.jurisdiction_slugs) as string[];
  return {
    contentHash: row.content_hash,
    citation: ftsText({ jurisdictions, source: row.source, citationPath: row.citation_path, heading: row.heading, content: row.content }, names).citation,
    heading: row.heading,
    title: row.title,
    body: row.content,
    jurisdictions,
  };
}

/** Stage two's input: each candidate's features for the learned ranker (also read by scripts/fit-ranker.ts). */
export async function candidateFeatureRows(
  deps: SearchDeps,
  candidates: readonly Candidate[],
  gathered: Pick<GatheredCandidates, "analysed" | "mentioned" | "queryVector">,
): Promise<{ candidate: Candidate; citationPath: string; features: FeatureVector }[]> {
  if (candidates.length === 0) return [];
  const ids = candidates.map((c) => c.chunkId);
  const rows = loadChunks(deps.db, ids);
  const { queryVector } = gathered;
  const vectors = queryVector === undefined ? new Map<number, Float32Array>() : chunkVectors(deps.db, ids);
  const cosineOf = (id: number) => {
    const v = vectors.get(id);
    return v === undefined || queryVector === undefined ? 0 : dot(v, queryVector);
  };
  const bestCosine = Math.max(...ids.map(cosineOf));
  const headingVectors = queryVector === undefined ? [] : await headingEmbeddings(deps.embedder, [...rows.values()]);
  const stats = termStatistics(deps.db);
  const names = jurisdictionNames(deps.db);
  return candidates.flatMap((candidate) => {
    const row = rows.get(candidate.chunkId);
    if (row === undefined) return [];
    const text = candidateTextOf(row, names);
    const headingVector = headingVectors.find((h) => h.hash === row.content_hash)?.vector;
    const titleCosine = headingVector === undefined || queryVector === undefined ? 0 : dot(headingVector, queryVector);
    const signals = { cosine: cosineOf(candidate.chunkId), titleCosine, bestCosine, mentioned: gathered.mentioned };
    return [{ candidate, citationPath: row.citation_path, features: candidateFeatures(text, gathered.analysed, stats, signals) }];
  });
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
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
