/**
 * The knowledge-base index of one database connection, with its embedder and every cache
 * that depends on what that database holds. Built once per connection (src/deps.ts) and
 * passed to searches, indexing and maintenance; nothing about an index lives in module
 * state. A search worker thread keeps its own CentroidCache for its own connection.
 *
 * Searches and indexing never upgrade the index: they refuse one that needs maintenance
 * (maintenance.ts), which `regkb serve` runs before it listens.
 */
import type { Database } from "bun:sqlite";
import { ScopeMembers } from "./bm25/scope-members";
import { Bm25TermIndex } from "./bm25/term-index";
import type { Embedder } from "./embedder/types";
import { HeadingVectorCache } from "./heading-vectors";
import { CentroidCache } from "./ivf-store";
import type { Lexicon } from "./lexicon";
import { ORGANISATION_PASSAGES_MARKED, readIndexMeta, readMetaValue } from "./meta-store";
import { FieldCache } from "./rank/features";
import { TermStatisticsCache } from "./rank/statistics";
import type { VectorMemory } from "./vector-memory";
import type { VectorSearchPool } from "./vector-pool";
import { shortlistDimensionsOf } from "./vector-store";

export class SearchIndex {
  /** The shared corpus's IVF centroids, reloaded after a retrain. */
  readonly centroids: CentroidCache;
  /** BM25 term statistics, recomputed after passages are added. */
  readonly termStatistics: TermStatisticsCache;
  /** Heading embeddings (by this index's embedder) for the ranker. */
  readonly headingVectors: HeadingVectorCache;
  /** Common terms' postings, for BM25 of a query made of them alone. */
  readonly bm25Terms: Bm25TermIndex;
  /** Passages per scope, for BM25 within a broad scope (bm25/within.ts). */
  readonly scopeMembers: ScopeMembers;
  /** Candidate passages' tokenised fields for the ranker. */
  readonly candidateFields = new FieldCache();
  /** This connection found the index ready; checked again only after forgetReady. */
  #ready = false;

  constructor(
    readonly db: Database,
    readonly embedder: Embedder,
    /** A search worker's in-memory int8 vectors; without it the vector shortlist scans vec0. */
    readonly vectorMemory?: VectorMemory,
  ) {
    this.centroids = new CentroidCache(db);
    this.termStatistics = new TermStatisticsCache(db);
    this.bm25Terms = new Bm25TermIndex(db);
    this.scopeMembers = new ScopeMembers(db);
    this.headingVectors = new HeadingVectorCache(embedder);
  }

  /** What maintenance must do before this index may be searched or written, or undefined if nothing. */
  maintenanceDue(): string | undefined {
    if (this.#ready) return undefined;
    const due = maintenanceDue(this.db, this.embedder);
    this.#ready = due === undefined;
    return due;
  }

  /** Throws, naming what is due, unless the index may be searched and written. */
  assertReady(): void {
    const due = this.maintenanceDue();
    if (due !== undefined) {
      throw new Error(`the search index needs maintenance (${due}): run \`regkb corpus maintain\` (\`regkb serve\` runs it before it listens)`);
    }
  }

  /** The index is being taken apart (re-embedding): it is checked again before its next use. */
  forgetReady(): void {
    this.#ready = false;
  }
}

function maintenanceDue(db: Database, embedder: Embedder): string | undefined {
  const meta = readIndexMeta(db);
  if (meta === undefined) return "no embedder is recorded for it yet";
  if (meta.embedderId !== embedder.id || meta.dimensions !== embedder.dimensions) {
    return `it was built with embedder ${meta.embedderId} (${meta.dimensions}-d) but ${embedder.id} (${embedder.dimensions}-d) is configured`;
  }
  const kept = shortlistDimensionsOf(db);
  if (kept === undefined) return "it has no vector table";
  if (kept !== embedder.shortlistDimensions) return `its vector table keeps ${kept} dimensions, the embedder's shortlist ${embedder.shortlistDimensions}`;
  if (readMetaValue(db, ORGANISATION_PASSAGES_MARKED) === undefined) return "organisation passages are not marked yet";
  return undefined;
}

/** What the search capability needs from Deps. */
export interface SearchDeps {
  searchIndex: SearchIndex;
  /** Runs searches (or, for a search run here, its vector half) on worker threads; without it, on the caller's thread. */
  vectorSearchPool?: VectorSearchPool;
  /** The vocabulary bridge for query expansion; without it a search uses the query's own words only. */
  lexicon?: Lexicon;
}
