/**
 * BM25 for a query of common terms alone (an AND of long posting lists, which FTS5 walks
 * and scores slowly at 100k passages) from postings held in memory: the same rows, scores
 * and order as FTS5 (conjunction.ts). A word FTS5 splits into a phrase ("1003.4", "u.s")
 * is held as the phrase's own postings, found from its tokens' offsets. One per connection
 * (SearchIndex), in the thread that runs its searches.
 *
 * The copy is valid for one BM25 generation (meta-store.ts, changed by every write to
 * search_fts): a search that finds the index changed since, or a term not loaded yet, is
 * answered by FTS5, so an insert or delete is seen at once. Terms are read from FTS5's own
 * tables (fts5-tables.ts) between searches, one per task, the least recently used given up
 * past POSTINGS_MAX; after a change the copy is rebuilt with the terms it held. Rebuilding
 * and giving up terms are paced (RELOAD_PAUSE_FACTOR), so neither a stream of writes nor
 * more terms than fit can take more than a bounded share of the thread.
 */
import type { Database } from "bun:sqlite";
import type { FtsHit, FtsWeights } from "../fts-store";
import { BM25_GENERATION, readMetaValue } from "../meta-store";
import { ORGANISATION_PASSAGE_TOKEN, scopeToken, type SearchScope } from "../scopes";
import { conjunctionTopK, type Postings } from "./conjunction";
import { declaredTokenizer, Fts5Tokenizer, OFFSETS, openInstances, readRowLengths, readTermInstances, readTotals, type Fts5Totals } from "./fts5-tables";

/**
 * Postings held at most, over all terms: 10 bytes each (row id, three column counts), so
 * ≤ 40 MB a thread. At 100k passages the 1,100 common terms hold 8.4M, those of the judged
 * questions' common-term queries 2.3M; at 1M passages lists are ten times longer and a
 * sixth of those fit. A term longer than this is never loaded.
 */
const POSTINGS_MAX = 4_000_000;
/** Row lengths read per slice while building a copy; searches run between slices. */
const ROW_SLICE = 20_000;
/** After a load run that took t ms and must pause (see #read), the next starts no sooner than this × t later. */
const RELOAD_PAUSE_FACTOR = 20;
/** Terms waiting to be loaded; past this, searches' further terms are not queued (FTS5 answers them). */
const WANTED_MAX = 1_000;
/** Query phrases whose tokens are remembered; past this the memo starts over (bounded memory). */
const TOKEN_MEMO_ENTRIES_MAX = 10_000;

interface Copy {
  generation: string;
  totals: Fts5Totals;
  /** Tokens per row over every column, by row id; -1 where no row. */
  rowTokens: Int32Array;
  /** Loaded terms (and scope tokens), least recently used first. */
  terms: Map<string, Postings>;
  postings: number;
  /** Terms too long to hold. */
  refused: Set<string>;
}

/** Key of a scope token's postings: the rows whose scopes column holds it (no text term starts with a space). */
const scopeKey = (token: string) => ` ${token}`;

export class Bm25TermIndex {
  #copy: Copy | undefined;
  /** Keys searches asked for that the copy lacks. */
  readonly #wanted = new Set<string>();
  #loading: Promise<void> | undefined;
  #noLoadBeforeMs = 0;
  /** Undefined until first used; null if search_fts is not declared as this reader expects. */
  #tokenizer: Fts5Tokenizer | null | undefined;
  readonly #tokens = new Map<string, string[]>();

  constructor(private readonly db: Database) {}

  /** Postings and bytes held now (the benchmark reports them). */
  get size(): { postings: number; bytes: number } {
    const copy = this.#copy;
    return { postings: copy?.postings ?? 0, bytes: (copy?.postings ?? 0) * 10 + (copy?.rowTokens.byteLength ?? 0) };
  }

  /**
   * What ftsSearch returns for `"p1" AND "p2" …` within `scope`, if the copy holds every
   * phrase at the index's current state; undefined otherwise (then FTS5 answers, and what
   * was missing is loaded for the next search).
   */
  searchAllOf(phrases: readonly string[], scope: SearchScope, weights: FtsWeights, limit: number): FtsHit[] | undefined {
    const tokenizer = this.#openTokenizer();
    if (tokenizer === null || phrases.length === 0) return undefined;
    const keys: string[] = [];
    for (const phrase of phrases) {
      const tokens = this.#tokensOf(tokenizer, phrase);
      if (tokens.length === 0) return undefined;
      keys.push(tokens.join(" "));
    }
    const own = scope.orgScopes.map((s) => scopeKey(scopeToken(s)));
    const scopeKeys = scope.allShared ? [scopeKey(ORGANISATION_PASSAGE_TOKEN), ...own] : [...scope.jurisdictions.map((j) => scopeKey(scopeToken(j))), ...own];
    if (!scope.allShared && scopeKeys.length === 0) return [];
    const copy = this.#current();
    const lists = this.#take(copy, [...keys, ...scopeKeys]);
    if (copy === undefined || lists === undefined) {
      this.#loadSoon();
      return undefined;
    }
    const allowed = scopeFilter(copy.rowTokens.length, scope.allShared, lists.slice(keys.length));
    return conjunctionTopK(lists.slice(0, keys.length), copy.totals, copy.rowTokens, allowed, weights, limit);
  }

  /** The copy if it matches the index now. */
  #current(): Copy | undefined {
    const generation = readMetaValue(this.db, BM25_GENERATION);
    return generation !== undefined && this.#copy?.generation === generation ? this.#copy : undefined;
  }

  /** Each key's postings, marked recently used; undefined (and the missing ones wanted) if any is not held. */
  #take(copy: Copy | undefined, keys: readonly string[]): Postings[] | undefined {
    const missing = keys.filter((k) => !copy?.terms.has(k));
    if (copy === undefined || missing.length > 0) {
      for (const k of missing) if (!copy?.refused.has(k) && this.#wanted.size < WANTED_MAX) this.#wanted.add(k);
      return undefined;
    }
    return keys.map((k) => {
      const postings = copy.terms.get(k)!;
      copy.terms.delete(k);
      copy.terms.set(k, postings);
      return postings;
    });
  }

  #openTokenizer(): Fts5Tokenizer | null {
    if (this.#tokenizer === undefined) {
      const tokenize = declaredTokenizer(this.db);
      this.#tokenizer = tokenize === undefined ? null : new Fts5Tokenizer(tokenize);
      if (this.#tokenizer !== null) openInstances(this.db);
    }
    return this.#tokenizer;
  }

  #tokensOf(tokenizer: Fts5Tokenizer, phrase: string): string[] {
    let tokens = this.#tokens.get(phrase);
    if (tokens === undefined) {
      tokens = tokenizer.tokens(phrase);
      if (this.#tokens.size >= TOKEN_MEMO_ENTRIES_MAX) this.#tokens.clear();
      this.#tokens.set(phrase, tokens);
    }
    return tokens;
  }

  #loadSoon(): void {
    if (Date.now() >= this.#noLoadBeforeMs) void this.load();
  }

  /**
   * Brings the copy to the index's current state, then loads the wanted terms, one per task
   * (yielding between them). Never rejects: a failed load leaves searches on FTS5. A load
   * under way is joined, not repeated. Exposed for tests and the benchmark, which wait for it.
   */
  async load(): Promise<void> {
    // A load that started before the latest write or search may leave either behind: then once more.
    for (let round = 0; round < 2 && (this.#loading !== undefined || this.#wanted.size > 0 || !this.#isCurrent()); round++) {
      this.#loading ??= this.#read().finally(() => {
        this.#loading = undefined;
      });
      await this.#loading;
    }
  }

  /** True also when the index cannot be read (a closed connection), so that a background load ends quietly. */
  #isCurrent(): boolean {
    try {
      return this.#current() !== undefined;
    } catch {
      return true;
    }
  }

  /**
   * A run that replaced a stale copy, gave up terms to make room or was overtaken by a write
   * is followed by a pause (RELOAD_PAUSE_FACTOR × its time), so a stream of writes or more
   * terms than fit cost the thread a bounded share of its time; filling the copy up to
   * POSTINGS_MAX is not.
   */
  async #read(): Promise<void> {
    // Never inside the search that asked: it has been answered by FTS5 first.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const started = Date.now();
    let pause = false;
    try {
      let copy = this.#current();
      if (copy === undefined) {
        pause = this.#copy !== undefined;
        for (const k of this.#copy?.terms.keys() ?? []) this.#wanted.add(k);
        copy = await this.#build();
        if (copy === undefined) return void (pause = true);
        this.#copy = copy;
      }
      for (let key = first(this.#wanted); key !== undefined && !pause; key = first(this.#wanted)) {
        this.#wanted.delete(key);
        if (copy.terms.has(key) || copy.refused.has(key)) continue;
        const postings = this.#postingsOf(copy, key);
        if (this.#current() !== copy) return void (pause = true);
        pause = this.#hold(copy, key, postings);
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    } catch {
      pause = true;
    } finally {
      if (pause) this.#noLoadBeforeMs = Date.now() + RELOAD_PAUSE_FACTOR * (Date.now() - started);
    }
  }

  /** A copy of the index's totals and row lengths, or undefined if a write landed while reading. */
  async #build(): Promise<Copy | undefined> {
    const generation = readMetaValue(this.db, BM25_GENERATION);
    if (generation === undefined) return undefined;
    const totals = readTotals(this.db);
    const lengths: { id: number; tokens: number }[] = [];
    for (let slice = readRowLengths(this.db, 0, ROW_SLICE); slice.length > 0; slice = readRowLengths(this.db, slice.at(-1)!.id, ROW_SLICE)) {
      lengths.push(...slice);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    if (readMetaValue(this.db, BM25_GENERATION) !== generation || lengths.length !== totals.rows) return undefined;
    const rowTokens = new Int32Array((lengths.at(-1)?.id ?? 0) + 1).fill(-1);
    for (const { id, tokens } of lengths) rowTokens[id] = tokens;
    return { generation, totals, rowTokens, terms: new Map(), postings: 0, refused: new Set() };
  }

  /**
   * A phrase's postings (one token or several, space-separated), counting occurrences of the
   * whole phrase as FTS5 does: its tokens at consecutive offsets of one column. A scope key's:
   * the rows whose scopes column holds it. Undefined if too long to hold.
   */
  #postingsOf(copy: Copy, key: string): Postings | undefined {
    const scopesOnly = key.startsWith(" ");
    const [first, ...rest] = scopesOnly ? [key.slice(1)] : key.split(" ");
    const starts = readTermInstances(this.db, first!);
    const followers = rest.map((token) => readTermInstances(this.db, token));
    if ([starts, ...followers].some((list) => list.length > 3 * POSTINGS_MAX)) return undefined;
    const following = followers.map((list) => new Set(list));
    const rows: number[] = [];
    const counts: number[] = [];
    for (const start of starts) {
      if (!following.every((set, i) => set.has(start + i + 1))) continue;
      const place = Math.floor(start / OFFSETS);
      const [row, c] = [Math.floor(place / 4), place % 4];
      // A row FTS5 no longer holds (docsize has none) is none of bm25's hits.
      if ((scopesOnly && c !== 3) || (copy.rowTokens[row] ?? -1) < 0) continue;
      if (rows.at(-1) !== row) {
        rows.push(row);
        counts.push(0, 0, 0);
      }
      if (c < 3) counts[counts.length - 3 + c]!++;
    }
    if (rows.length > POSTINGS_MAX) return undefined;
    return { rows: Int32Array.from(rows), counts: Uint16Array.from(counts) };
  }

  /** Holds a term's postings, giving up the least recently used past POSTINGS_MAX; true if any was given up. */
  #hold(copy: Copy, key: string, postings: Postings | undefined): boolean {
    if (postings === undefined) {
      copy.refused.add(key);
      return false;
    }
    let evicted = false;
    for (const [k, held] of copy.terms) {
      if (copy.postings + postings.rows.length <= POSTINGS_MAX) break;
      copy.terms.delete(k);
      copy.postings -= held.rows.length;
      evicted = true;
    }
    copy.terms.set(key, postings);
    copy.postings += postings.rows.length;
    return evicted;
  }
}

function first(keys: Set<string>): string | undefined {
  for (const key of keys) return key;
  return undefined;
}

/**
 * The scope clause of ftsSearch's MATCH as a row test. Whole shared corpus (`lists`: the
 * organisation-passage token's rows, then the caller's own scopes'): every row but other
 * organisations' passages. Otherwise (`lists`: the scopes' rows): a row in any of them.
 */
function scopeFilter(rowSpan: number, allShared: boolean, lists: readonly Postings[]): (row: number) => boolean {
  const marked = new Uint8Array(rowSpan);
  if (allShared) {
    for (const r of lists[0]!.rows) marked[r] = 1;
    for (const own of lists.slice(1)) for (const r of own.rows) marked[r] = 0;
    return (row) => marked[row] === 0;
  }
  for (const list of lists) for (const r of list.rows) marked[r] = 1;
  return (row) => marked[row] === 1;
}
