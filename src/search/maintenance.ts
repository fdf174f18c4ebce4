/**
 * Index maintenance: the one place the search index is upgraded, so that no search or
 * indexing ever has to. `regkb serve` runs it before it listens, `regkb corpus maintain` on
 * demand, `regkb corpus import` before and after its import, `regkb corpus re-embed` after
 * re-embedding. Each step runs only when due, so with nothing due it costs a few reads:
 *
 * 1. re-embed: the index was built by another embedder (or a re-embed was interrupted).
 *    Done here for the built-in embedders (it costs time only: seconds for the sample
 *    corpus); an external one (openai) costs money and network, so that is refused, and the
 *    operator runs `regkb corpus re-embed`;
 * 2. an empty index adopts the embedder (its vector table);
 * 3. a vector table whose int8 copies keep other leading dimensions than the embedder's
 *    shortlist (made by an earlier version) is rebuilt from the stored vectors;
 * 4. organisation passages indexed before they carried the organisation-passage token get it;
 * 5. the shared corpus's vectors are clustered once there are enough of them, or enough more;
 *    an index clustered before the clusters' jurisdictions were recorded has them recorded;
 * 6. the BM25 index is merged into one segment once it is large, and again when it has grown.
 *
 * Afterwards SearchIndex.assertReady passes: searches and indexing refuse an index that
 * needs steps 1–4 rather than upgrade it themselves (steps 5 and 6 only make searches faster).
 */
import type { Database } from "bun:sqlite";
import type { Logger } from "../log";
import { chunkBatch, countChunks, jurisdictionNames, jurisdictionsOfRow, organisationChunkBatch } from "./chunk-store";
import type { EmbedderKind } from "./embedder/index";
import { deleteFtsRow, insertFtsRow, mergeFtsSegments } from "./fts-store";
import {
  clearCentroids,
  clusteredVectorCount,
  clusterJurisdictionsRecorded,
  recordClusterJurisdictionsFromVectors,
  sharedVectorCount,
} from "./ivf-store";
import { BM25_GENERATION, BM25_MERGED_PASSAGES, bumpBm25Generation, bumpVectorGeneration, clearIndexMeta, ORGANISATION_PASSAGES_MARKED, readIndexMeta, readMetaValue, VECTOR_GENERATION, writeIndexMeta, writeMetaValue } from "./meta-store";
import { embeddingText, ftsTextOfRow } from "./passage-text";
import type { SearchIndex } from "./search-index";
import { REBUILD_BATCH_ROWS } from "./sql";
import { clusterSharedVectors, rebuildVectorTable } from "./vector-layout";
import { createVectorTable, deleteAllVectorRows, dropVectorTable, replaceVectorsOfChunk, SHARED_OWNER, shortlistDimensionsOf, VECTOR_TABLE } from "./vector-store";

/** What maintenance needs from Deps. */
export interface MaintenanceDeps {
  searchIndex: SearchIndex;
  /** The embedder's kind decides whether a changed embedder is re-embedded here (step 1). */
  config: { embedder: { kind: EmbedderKind } };
  log: Logger;
}

/** What one run did: a field is absent when its step had nothing to do. */
export interface MaintenanceReport {
  /** Step 1: passages re-embedded with the configured (built-in) embedder. */
  reembeddedPassages?: number;
  /** Step 3: vector rows rebuilt to the embedder's shortlist dimensions. */
  rebuiltVectors?: number;
  /** Step 4: organisation passages whose BM25 rows were given the organisation-passage token. */
  markedPassages?: number;
  /** Step 5: the shared vectors clustered, and into how many clusters. */
  clustered?: { vectors: number; clusters: number };
  /** Step 5: (cluster, jurisdiction) pairs recorded for an index clustered before they were. */
  clusterJurisdictions?: number;
  /** Step 6: the BM25 index was merged into one segment, holding this many passages. */
  mergedBm25Passages?: number;
}

export interface ReembedProgress {
  doneChunks: number;
  totalChunks: number;
}

export async function maintainSearchIndex(deps: MaintenanceDeps, onProgress?: (p: ReembedProgress) => void): Promise<MaintenanceReport> {
  const index = deps.searchIndex;
  const { db, embedder } = index;
  const started = performance.now();
  const elapsedMs = () => Math.round(performance.now() - started);
  const report: MaintenanceReport = {};
  const stale = staleEmbedder(index);
  if (stale !== undefined) {
    if (deps.config.embedder.kind === "openai") throw new Error(`${stale}; run \`regkb corpus re-embed\``);
    report.reembeddedPassages = (await reembedAll(index, onProgress)).chunks;
    deps.log.info("index_reembedded", { embedder: embedder.id, passages: report.reembeddedPassages, elapsedMs: elapsedMs() });
  }
  const meta = readIndexMeta(db);
  if (meta?.embedderId !== embedder.id || meta.dimensions !== embedder.dimensions || shortlistDimensionsOf(db) === undefined) {
    db.transaction(() => {
      dropVectorTable(db);
      createVectorTable(db, embedder.shortlistDimensions);
      clearCentroids(db);
      writeIndexMeta(db, { embedderId: embedder.id, dimensions: embedder.dimensions });
    }).immediate();
  }
  if (shortlistDimensionsOf(db) !== embedder.shortlistDimensions) {
    report.rebuiltVectors = rebuildVectorTable(db, index.centroids, embedder.shortlistDimensions).vectors;
    deps.log.info("vector_table_rebuilt", { vectors: report.rebuiltVectors, elapsedMs: elapsedMs() });
  }
  const marked = markOrganisationPassages(db);
  if (marked > 0) {
    report.markedPassages = marked;
    deps.log.info("organisation_passages_marked", { passages: marked });
  }
  const clustered = clusterVectorsIfGrown(index);
  if (clustered !== undefined) {
    report.clustered = clustered;
    deps.log.info("vectors_clustered", { ...clustered, elapsedMs: elapsedMs() });
  }
  if (clusteredVectorCount(db) !== undefined && !clusterJurisdictionsRecorded(db)) {
    report.clusterJurisdictions = db.transaction(() => recordClusterJurisdictionsFromVectors(db, VECTOR_TABLE, SHARED_OWNER)).immediate();
    deps.log.info("cluster_jurisdictions_recorded", { pairs: report.clusterJurisdictions, elapsedMs: elapsedMs() });
  }
  const merged = mergeBm25IfGrown(db);
  if (merged !== undefined) {
    report.mergedBm25Passages = merged;
    deps.log.info("bm25_index_merged", { passages: merged, elapsedMs: elapsedMs() });
  }
  // An index last written before vector generations: the search workers' copies need one to compare.
  if (readMetaValue(db, VECTOR_GENERATION) === undefined) bumpVectorGeneration(db);
  // Likewise for BM25 generations (bm25/term-index.ts).
  if (readMetaValue(db, BM25_GENERATION) === undefined) bumpBm25Generation(db);
  index.assertReady();
  return report;
}

/**
 * Why the index's vectors cannot answer this embedder's queries, or undefined if they can:
 * it holds passages embedded by another model or dimension, or by none on record (a
 * re-embed that did not finish, see reembedAll).
 */
function staleEmbedder({ db, embedder }: SearchIndex): string | undefined {
  if (countChunks(db) === 0) return undefined;
  const meta = readIndexMeta(db);
  if (meta === undefined) return "the search index holds passages but records no embedder (an interrupted re-embed)";
  if (meta.embedderId === embedder.id && meta.dimensions === embedder.dimensions) return undefined;
  return `the search index was built with embedder ${meta.embedderId} (${meta.dimensions}-d) but ${embedder.id} (${embedder.dimensions}-d) is configured`;
}

/**
 * BM25 rows of organisation passages written before they carried the organisation-passage
 * token get it, once: a search of the whole shared corpus relies on it to leave other
 * organisations' passages out. Returns the passages rewritten.
 */
function markOrganisationPassages(db: Database): number {
  if (readMetaValue(db, ORGANISATION_PASSAGES_MARKED) !== undefined) return 0;
  let marked = 0;
  db.transaction(() => {
    const names = jurisdictionNames(db);
    for (let chunks = organisationChunkBatch(db, 0, REBUILD_BATCH_ROWS); chunks.length > 0; chunks = organisationChunkBatch(db, chunks.at(-1)!.id, REBUILD_BATCH_ROWS)) {
      for (const c of chunks) {
        deleteFtsRow(db, c.id);
        insertFtsRow(db, c.id, c.owner_org_id, jurisdictionsOfRow(c), ftsTextOfRow(c, names));
      }
      marked += chunks.length;
    }
    writeMetaValue(db, ORGANISATION_PASSAGES_MARKED, "1");
  }).immediate();
  return marked;
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
function ivfClusterCount(vectors: number): number {
  return Math.max(16, Math.min(256, Math.round(Math.sqrt(vectors) / 4)));
}

/** Clusters the shared corpus's vectors once there are enough of them, or enough more. */
function clusterVectorsIfGrown({ db, embedder }: SearchIndex): { vectors: number; clusters: number } | undefined {
  const vectors = sharedVectorCount(db);
  const trained = clusteredVectorCount(db);
  if (vectors < IVF_VECTORS_MIN || (trained !== undefined && vectors < IVF_RETRAIN_GROWTH * trained)) return undefined;
  const clusters = ivfClusterCount(vectors);
  return clusterSharedVectors(db, embedder.dimensions, {
    clusters,
    sampleVectors: 64 * clusters,
    rounds: 40,
    batchVectors: 1024,
    seed: 1,
  });
}

/**
 * FTS5 writes each batch of passages as a new segment and merges them only in part, so a
 * term's postings are spread over several, and a query walks each. One merged segment makes
 * BM25 at 100k passages about a fifth faster (p50 1.7 → 1.0 ms, the judged questions' total
 * 655 → 501 ms, measured alone); it costs ~2 s there, so it runs once the index is large and
 * again when it has grown by a quarter, not after every upload.
 */
const BM25_MERGE_PASSAGES_MIN = 5_000;
const BM25_MERGE_GROWTH = 1.25;

function mergeBm25IfGrown(db: Database): number | undefined {
  const passages = countChunks(db);
  const mergedAt = Number(readMetaValue(db, BM25_MERGED_PASSAGES) ?? 0);
  if (passages < BM25_MERGE_PASSAGES_MIN || (mergedAt > 0 && passages < BM25_MERGE_GROWTH * mergedAt)) return undefined;
  db.transaction(() => {
    mergeFtsSegments(db);
    writeMetaValue(db, BM25_MERGED_PASSAGES, String(passages));
  }).immediate();
  return passages;
}

const REEMBED_BATCH_CHUNKS = 256;

/**
 * Rebuilds every vector with the index's embedder, then records it as the index's model
 * (`regkb corpus re-embed`; maintainSearchIndex for built-in embedders). Run maintenance
 * afterwards: the index is unclustered and its organisation passages to be marked again.
 */
export async function reembedAll(index: SearchIndex, onProgress?: (p: ReembedProgress) => void): Promise<{ chunks: number }> {
  const { db, embedder } = index;
  const total = countChunks(db);
  const names = jurisdictionNames(db);
  index.forgetReady();
  db.transaction(() => {
    dropVectorTable(db);
    createVectorTable(db, embedder.shortlistDimensions);
    deleteAllVectorRows(db);
    clearCentroids(db);
    // Written last, after every vector, so an interrupted run is detected and repeated.
    clearIndexMeta(db);
  }).immediate();
  let afterId = 0;
  let done = 0;
  for (;;) {
    const batch = chunkBatch(db, afterId, REEMBED_BATCH_CHUNKS);
    if (batch.length === 0) break;
    const vectors = await embedder.embed(batch.map((c) => embeddingText(c.heading, c.content, jurisdictionsOfRow(c), names)));
    // Centroids were cleared above: every vector goes in unclustered.
    db.transaction(() => batch.forEach((c, i) => replaceVectorsOfChunk(db, undefined, c.id, c.owner_org_id, jurisdictionsOfRow(c), vectors[i]!))).immediate();
    afterId = batch[batch.length - 1]!.id;
    done += batch.length;
    onProgress?.({ doneChunks: done, totalChunks: total });
  }
  writeIndexMeta(db, { embedderId: embedder.id, dimensions: embedder.dimensions });
  return { chunks: done };
}
