/**
 * The passages each scope holds (search_chunk_scopes), read on demand and kept sorted in
 * memory for one BM25 generation (meta-store.ts: every write to search_fts changes it, in
 * the same transaction as the passage's scope rows), so a broad scope's BM25 can filter
 * FTS5's ranking of the readable corpus instead of ANDing an OR of scope tokens inside the
 * MATCH (within.ts). 4 bytes per passage × scope held. One per connection (SearchIndex).
 * After a write, reading them again (~25 ms for 8 jurisdictions at 100k passages) is paced
 * like the term index's rebuild: meanwhile the scoped MATCH answers.
 */
import type { Database } from "bun:sqlite";
import { BM25_GENERATION, readMetaValue } from "../meta-store";

export interface ScopeMembership {
  /** The BM25 generation these members were read at. */
  generation: string;
  /** The passages in any of the scopes asked for: `has(chunkId)`. */
  has(chunkId: number): boolean;
  /** Passage × scope rows of the scopes asked for, over every passage of the index. */
  share: number;
}

/** After reads that took t ms, members of a newer generation are read no sooner than this × t later. */
const READ_PAUSE_FACTOR = 20;

export class ScopeMembers {
  #generation: string | undefined;
  readonly #members = new Map<string, Int32Array>();
  #passages = 0;
  #noReadBeforeMs = 0;

  constructor(private readonly db: Database) {}

  /**
   * The members of `scopes` as the index is now (read now for scopes not held yet);
   * undefined for an index without a generation, or while a re-read after a write waits.
   */
  of(scopes: readonly string[]): ScopeMembership | undefined {
    const generation = readMetaValue(this.db, BM25_GENERATION);
    if (generation === undefined) return undefined;
    const started = Date.now();
    if (generation !== this.#generation) {
      if (started < this.#noReadBeforeMs) return undefined;
      this.#members.clear();
      this.#passages = this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n;
      this.#generation = generation;
    }
    const held = this.#members.size;
    const lists = scopes.map((scope) => this.#read(scope));
    if (this.#members.size > held) this.#noReadBeforeMs = Date.now() + READ_PAUSE_FACTOR * (Date.now() - started);
    const rows = lists.reduce((sum, list) => sum + list.length, 0);
    return { generation, has: (chunkId) => lists.some((list) => contains(list, chunkId)), share: rows / Math.max(1, this.#passages) };
  }

  #read(scope: string): Int32Array {
    let list = this.#members.get(scope);
    if (list === undefined) {
      const ids = this.db
        .query<{ id: number }, [string]>("SELECT chunk_id AS id FROM search_chunk_scopes WHERE scope = ? ORDER BY chunk_id")
        .values(scope)
        .map((row) => row[0] as number);
      list = Int32Array.from(ids);
      this.#members.set(scope, list);
    }
    return list;
  }
}

function contains(sorted: Int32Array, value: number): boolean {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = sorted[middle]!;
    if (at === value) return true;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}
