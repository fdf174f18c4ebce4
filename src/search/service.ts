/**
 * The knowledge base: hybrid search over the shared corpus and organisations' documents,
 * jurisdiction resolution, and indexing of passages. No billing here: callers charge.
 */
import type { Database } from "bun:sqlite";
import { ApiError } from "../http/errors";
import { gatherCandidates } from "./candidates";
import { citationKeysOfPath } from "./citations";
import {
  chunkBatch,
  chunksOfDocument,
  countChunks,
  deleteChunkRow,
  insertChunkRow,
  insertCitationKeys,
  jurisdictionNames,
  jurisdictionsOfRow,
  loadChunks,
  organisationChunkBatch,
  type NewChunk,
} from "./chunk-store";
import { deleteFtsRow, insertFtsRow, type FtsText } from "./fts-store";
import { fuse } from "./hybrid";
import type { Centroids } from "./ivf";
import { clearCentroids, clusteredVectorCount, sharedVectorCount } from "./ivf-store";
import { clearIndexMeta, readIndexMeta, readMetaValue, writeIndexMeta, writeMetaValue } from "./meta-store";
import { embeddingText, ftsText, ftsTextOfRow } from "./passage-text";
import { FOLD_PASSAGES_MAX, foldRanking } from "./rank/fold";
import { highlightsOf } from "./rank/highlights";
import { rerank } from "./rerank";
import { pageSize, type SearchMatch, type SearchMethod, type SearchRequest } from "./request";
import type { SearchDeps } from "./search-index";
import { REBUILD_BATCH_ROWS } from "./sql";
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from "./tuning";
import { clusterSharedVectors, rebuildVectorTable } from "./vector-layout";
import {
  createVectorTable,
  deleteAllVectorRows,
  deleteVectorsOfChunk,
  dropVectorTable,
  insertVectors,
  replaceVectorsOfChunk,
  shortlistDimensionsOf,
  vectorTableExists,
} from "./vector-store";

// ---------- jurisdictions ----------

/** Default: every jurisdiction enabled for the organisation; otherwise each must be enabled. */
export function resolveJurisdictions(deps: { db: Database }, orgId: string, requested?: string[]): string[] {
  const enabled = deps.db
    .query<{ slug: string }, [string]>("SELECT slug FROM organisation_jurisdictions WHERE org_id = ? ORDER BY slug")
    .all(orgId)
    .map((r) => r.slug);
  if (requested === undefined) return enabled;
  const allowed = new Set(enabled);
  const wanted = [...new Set(requested)];
  const bad = wanted.filter((s) => !allowed.has(s));
  if (bad.length > 0) {
    throw new ApiError(400, "invalid_jurisdictions", `unknown or not enabled for this organisation: ${bad.slice(0, 10).join(", ")}`);
  }
  return wanted;
}

// ---------- index lifecycle ----------

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
  const meta = readIndexMeta(deps.searchIndex.db);
  return meta !== undefined && (meta.embedderId !== deps.searchIndex.embedder.id || meta.dimensions !== deps.searchIndex.embedder.dimensions) && countChunks(deps.searchIndex.db) > 0;
}

export function ensureSearchIndex(deps: SearchDeps): { rebuiltVectors?: number } {
  const signature = `${deps.searchIndex.embedder.id}/${deps.searchIndex.embedder.dimensions}/${deps.searchIndex.embedder.shortlistDimensions}`;
  if (deps.searchIndex.preparedFor === signature) return {};
  const meta = readIndexMeta(deps.searchIndex.db);
  const matches = meta?.embedderId === deps.searchIndex.embedder.id && meta.dimensions === deps.searchIndex.embedder.dimensions;
  if (!matches || !vectorTableExists(deps.searchIndex.db)) {
    if (meta !== undefined && !matches && countChunks(deps.searchIndex.db) > 0) {
      throw new Error(
        `the search index was built with embedder ${meta.embedderId} (${meta.dimensions}-d) but ${deps.searchIndex.embedder.id} (${deps.searchIndex.embedder.dimensions}-d) is configured; run \`regkb corpus re-embed\``,
      );
    }
    deps.searchIndex.db.transaction(() => {
      dropVectorTable(deps.searchIndex.db);
      createVectorTable(deps.searchIndex.db, deps.searchIndex.embedder.shortlistDimensions);
      clearCentroids(deps.searchIndex.db);
      writeIndexMeta(deps.searchIndex.db, { embedderId: deps.searchIndex.embedder.id, dimensions: deps.searchIndex.embedder.dimensions });
    }).immediate();
  }
  let rebuiltVectors: number | undefined;
  if (shortlistDimensionsOf(deps.searchIndex.db) !== deps.searchIndex.embedder.shortlistDimensions) {
    rebuiltVectors = rebuildVectorTable(deps.searchIndex.db, deps.searchIndex.centroids, deps.searchIndex.embedder.shortlistDimensions).vectors;
  }
  markOrganisationPassages(deps.searchIndex.db);
  deps.searchIndex.preparedFor = signature;
  return { rebuiltVectors };
}

/**
 * BM25 rows of organisation passages written before they carried the organisation-passage
 * token get it, once: a search of the whole shared corpus relies on it to leave other
 * organisations' passages out.
 */
function markOrganisationPassages(db: Database): void {
  if (readMetaValue(db, "fts_organisation_token") !== undefined) return;
  db.transaction(() => {
    const names = jurisdictionNames(db);
    for (let chunks = organisationChunkBatch(db, 0, REBUILD_BATCH_ROWS); chunks.length > 0; chunks = organisationChunkBatch(db, chunks.at(-1)!.id, REBUILD_BATCH_ROWS)) {
      for (const c of chunks) {
        const jurisdictions = jurisdictionsOfRow(c);
        deleteFtsRow(db, c.id);
        insertFtsRow(db, c.id, c.owner_org_id, jurisdictions, ftsTextOfRow(c, names));
      }
    }
    writeMetaValue(db, "fts_organisation_token", "1");
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
  const vectors = sharedVectorCount(deps.searchIndex.db);
  const trained = clusteredVectorCount(deps.searchIndex.db);
  if (vectors < IVF_VECTORS_MIN || (trained !== undefined && vectors < IVF_RETRAIN_GROWTH * trained)) return undefined;
  const clusters = ivfClusterCount(vectors);
  return clusterSharedVectors(deps.searchIndex.db, deps.searchIndex.embedder.dimensions, {
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
  const total = countChunks(deps.searchIndex.db);
  const names = jurisdictionNames(deps.searchIndex.db);
  deps.searchIndex.db.transaction(() => {
    dropVectorTable(deps.searchIndex.db);
    createVectorTable(deps.searchIndex.db, deps.searchIndex.embedder.shortlistDimensions);
    deleteAllVectorRows(deps.searchIndex.db);
    clearCentroids(deps.searchIndex.db);
    // Written last, after every vector, so an interrupted run is detected and repeated.
    clearIndexMeta(deps.searchIndex.db);
  }).immediate();
  deps.searchIndex.preparedFor = undefined;
  let afterId = 0;
  let done = 0;
  for (;;) {
    const batch = chunkBatch(deps.searchIndex.db, afterId, REEMBED_BATCH_CHUNKS);
    if (batch.length === 0) break;
    const vectors = await deps.searchIndex.embedder.embed(
      batch.map((c) => embeddingText(c.heading, c.content, jurisdictionsOfRow(c), names)),
    );
    deps.searchIndex.db.transaction(() => batch.forEach((c, i) => replaceVectorsOfChunk(deps.searchIndex.db, deps.searchIndex.centroids.current(), c.id, c.owner_org_id, jurisdictionsOfRow(c), vectors[i]!))).immediate();
    afterId = batch[batch.length - 1]!.id;
    done += batch.length;
    onProgress?.({ doneChunks: done, totalChunks: total });
  }
  clusterVectorsIfGrown(deps);
  writeIndexMeta(deps.searchIndex.db, { embedderId: deps.searchIndex.embedder.id, dimensions: deps.searchIndex.embedder.dimensions });
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

/** A passage in every part of the index: its row, BM25 row, citation keys and vectors. */
function insertChunk(db: Database, centroids: Centroids | undefined, chunk: NewChunk, fts: FtsText, citationKeys: readonly string[], vector: Float32Array): number {
  const id = insertChunkRow(db, chunk);
  insertFtsRow(db, id, chunk.ownerOrgId, chunk.jurisdictions, fts);
  insertCitationKeys(db, id, citationKeys);
  insertVectors(db, centroids, id, chunk.ownerOrgId, chunk.jurisdictions, vector);
  return id;
}

function deleteChunk(db: Database, chunkId: number): void {
  deleteVectorsOfChunk(db, chunkId);
  deleteFtsRow(db, chunkId);
  deleteChunkRow(db, chunkId);
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
  const names = jurisdictionNames(deps.searchIndex.db);
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
  const existing = new Map(chunksOfDocument(deps.searchIndex.db, input.documentId).map((c) => [c.position, c]));
  const changed = wanted.filter((w) => existing.get(w.position)?.content_hash !== w.contentHash);
  const wantedPositions = new Set(wanted.map((w) => w.position));
  const changedPositions = new Set(changed.map((c) => c.position));
  const stale = [...existing.values()].filter((e) => !wantedPositions.has(e.position) || changedPositions.has(e.position));

  const vectors: Float32Array[] = [];
  for (let i = 0; i < changed.length; i += EMBED_BATCH_TEXTS) {
    const batch = changed.slice(i, i + EMBED_BATCH_TEXTS);
    vectors.push(...(await deps.searchIndex.embedder.embed(batch.map((c) => embeddingText(c.heading, c.content, c.jurisdictions, names)))));
    onEmbedded?.(batch.length);
  }
  deps.searchIndex.db.transaction(() => {
    for (const s of stale) deleteChunk(deps.searchIndex.db, s.id);
    const centroids = deps.searchIndex.centroids.current();
    changed.forEach((c, i) => {
      insertChunk(deps.searchIndex.db, centroids, c, ftsText(c, names), citationKeysOfPath(c.citationPath), vectors[i]!);
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
export function deleteDocumentChunks(deps: Pick<SearchDeps, "searchIndex">, documentId: string): void {
  deps.searchIndex.db.transaction(() => {
    for (const c of chunksOfDocument(deps.searchIndex.db, documentId)) deleteChunk(deps.searchIndex.db, c.id);
  }).immediate();
}

// ---------- search ----------

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
  const topK = pageSize(request);
  const gathered = await gatherCandidates(deps, request, tuning, method);
  const ranked =
    method === "hybrid" && tuning.rerank ? await rerank(deps.searchIndex, gathered.ranked.slice(0, tuning.rerankCandidates), gathered, tuning.ranker) : gathered.ranked;
  // Cited passages first (most specific citation first), then the ranking.
  const citedIds = new Set(gathered.cited.map((c) => c.chunkId));
  const citedFirst = fuse([], [], gathered.cited, tuning.weights, gathered.cited.length, gathered.citationOnly).map((c) => c.chunkId);
  const scoreOf = new Map(ranked.map((r) => [r.chunkId, r.score]));
  const order = [...citedFirst, ...ranked.map((r) => r.chunkId).filter((id) => !citedIds.has(id))];
  const fold = tuning.fold && method === "hybrid";
  const rows = loadChunks(deps.searchIndex.db, order.slice(0, fold ? FOLD_PASSAGES_MAX * topK : topK));
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
      jurisdictionSlugs: jurisdictionsOfRow(row),
      ...(row.title ? { title: row.title } : {}),
      highlights: highlightsOf(m.content, gathered.analysed.stems, gathered.analysed.expansions),
    };
  });
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
