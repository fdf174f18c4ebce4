/**
 * Writing passages into the index: a document's passages replace its earlier ones, each
 * passage in every part of the index at once (its row, BM25 row, citation keys, vectors).
 * The index must be ready (maintenance.ts): indexing never upgrades it.
 */
import type { Database } from "bun:sqlite";
import { citationKeysOfPath } from "./citations";
import { chunkIdAt, chunksOfDocument, deleteChunkRow, insertChunkRow, insertCitationKeys, jurisdictionNames, loadChunks, type NewChunk } from "./chunk-store";
import type { Embedder } from "./embedder/types";
import { deleteFtsRow, insertFtsRow, type FtsText } from "./fts-store";
import type { Centroids } from "./ivf";
import { embeddingText, ftsText } from "./passage-text";
import type { SearchIndex } from "./search-index";
import { chunkVectors, deleteVectorsOfChunk, insertVectors } from "./vector-store";

/** What indexing needs from Deps. */
export interface IndexingDeps {
  searchIndex: SearchIndex;
}

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

/** Embedding batch size: bounds memory. */
const EMBED_BATCH_TEXTS = 64;

/**
 * Replaces a document's passages in the index, re-embedding only passages whose content
 * hash changed: importing the same document twice writes nothing. New shared vectors join
 * the nearest existing cluster; training clusters anew is maintenance's (after an import).
 */
export async function indexDocument(deps: IndexingDeps, input: IndexDocumentInput): Promise<IndexDocumentResult> {
  const index = deps.searchIndex;
  index.assertReady();
  const { db } = index;
  const names = jurisdictionNames(db);
  const wanted = chunksToIndex(input);
  const existing = new Map(chunksOfDocument(db, input.documentId).map((c) => [c.position, c]));
  const changed = wanted.filter((w) => existing.get(w.position)?.content_hash !== w.contentHash);
  const wantedPositions = new Set(wanted.map((w) => w.position));
  const changedPositions = new Set(changed.map((c) => c.position));
  const stale = [...existing.values()].filter((e) => !wantedPositions.has(e.position) || changedPositions.has(e.position));

  const vectors = await embedChunks(index.embedder, changed, names);
  db.transaction(() => {
    for (const s of stale) deleteChunk(db, s.id);
    const centroids = index.centroids.current();
    changed.forEach((c, i) => insertChunk(db, centroids, c, ftsText(c, names), citationKeysOfPath(c.citationPath), vectors[i]!));
  }).immediate();
  const removed = [...existing.keys()].filter((p) => !wantedPositions.has(p)).length;
  return { added: changed.length, unchanged: wanted.length - changed.length, removed };
}

/** A document's passages as the index holds them, each with its content hash. */
export function chunksToIndex(input: IndexDocumentInput): NewChunk[] {
  return input.passages.map((p): NewChunk => {
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
}

/** Each passage's vector, in order: its embeddingText (jurisdiction `names` by slug) embedded in batches. */
export async function embedChunks(embedder: Embedder, chunks: readonly NewChunk[], names: Map<string, string>): Promise<Float32Array[]> {
  const vectors: Float32Array[] = [];
  for (let i = 0; i < chunks.length; i += EMBED_BATCH_TEXTS) {
    const batch = chunks.slice(i, i + EMBED_BATCH_TEXTS);
    vectors.push(...(await embedder.embed(batch.map((c) => embeddingText(c.heading, c.content, c.jurisdictions, names)))));
  }
  return vectors;
}

/** An organisation's uploaded document, as the documents capability hands it over. */
export interface DocumentChunksInput {
  documentId: string;
  orgId: string;
  jurisdictions: string[];
  source: string;
  chunks: { text: string; citationPath: string; position: number }[];
}

/** The index's input for an uploaded document. */
export function documentChunksInput(input: DocumentChunksInput): IndexDocumentInput {
  return {
    documentId: input.documentId,
    ownerOrgId: input.orgId,
    jurisdictions: input.jurisdictions,
    passages: input.chunks.map((c) => ({ source: input.source, citationPath: c.citationPath, text: c.text, position: c.position })),
  };
}

/** Contract for the documents capability: an organisation's uploaded document becomes searchable. */
export async function indexDocumentChunks(deps: IndexingDeps, input: DocumentChunksInput): Promise<void> {
  await indexDocument(deps, documentChunksInput(input));
}

/** Removes every passage of a document (vectors, BM25 rows, citation keys). */
export function deleteDocumentChunks(deps: IndexingDeps, documentId: string): void {
  const { db } = deps.searchIndex;
  db.transaction(() => {
    for (const c of chunksOfDocument(db, documentId)) deleteChunk(db, c.id);
  }).immediate();
}

/** A passage as the system of record (PostgreSQL) holds it: its id, its fields and its stored vector. */
export interface StoredPassage extends NewChunk {
  id: number;
  vector: Float32Array;
}

export interface StoredPassagesResult {
  written: number;
  unchanged: number;
  removed: number;
}

/**
 * Makes the index hold `passages` as given (same ids, the vectors given: nothing is
 * embedded) and none of `removedIds`, in one transaction with `alsoInTransaction` (a
 * replica's position in the change log). A passage already held as given is left alone and
 * an absent one is not removed, so applying the same state twice changes nothing. A passage
 * held under another id at the same (document, position) is stale and goes.
 */
export function putStoredPassages(
  index: SearchIndex,
  passages: readonly StoredPassage[],
  removedIds: readonly number[],
  alsoInTransaction: () => void = () => {},
): StoredPassagesResult {
  index.assertReady();
  const { db } = index;
  const names = jurisdictionNames(db);
  const result: StoredPassagesResult = { written: 0, unchanged: 0, removed: 0 };
  db.transaction(() => {
    const ids = [...passages.map((p) => p.id), ...removedIds];
    const held = loadChunks(db, ids);
    const heldVectors = chunkVectors(db, passages.map((p) => p.id));
    for (const id of removedIds) {
      if (!held.has(id)) continue;
      deleteChunk(db, id);
      result.removed++;
    }
    const centroids = index.centroids.current();
    for (const p of passages) {
      const row = held.get(p.id);
      const same =
        row !== undefined &&
        row.content_hash === p.contentHash &&
        row.document_id === p.documentId &&
        row.position === p.position &&
        row.title === p.title &&
        sameFloats(heldVectors.get(p.id), p.vector);
      if (same) {
        result.unchanged++;
        continue;
      }
      if (row !== undefined) deleteChunk(db, p.id);
      const other = chunkIdAt(db, p.documentId, p.position);
      if (other !== undefined) deleteChunk(db, other);
      insertChunk(db, centroids, p, ftsText(p, names), citationKeysOfPath(p.citationPath), p.vector, p.id);
      result.written++;
    }
    alsoInTransaction();
  }).immediate();
  return result;
}

function sameFloats(a: Float32Array | undefined, b: Float32Array): boolean {
  return a !== undefined && a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
}

/** `centroids`: the shared corpus's clusters, if it is clustered (CentroidCache). */
function insertChunk(
  db: Database,
  centroids: Centroids | undefined,
  chunk: NewChunk,
  fts: FtsText,
  citationKeys: readonly string[],
  vector: Float32Array,
  givenId: number | null = null,
): void {
  const id = insertChunkRow(db, chunk, givenId);
  insertFtsRow(db, id, chunk.ownerOrgId, chunk.jurisdictions, fts);
  insertCitationKeys(db, id, citationKeys);
  insertVectors(db, centroids, id, chunk.ownerOrgId, chunk.jurisdictions, vector);
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
