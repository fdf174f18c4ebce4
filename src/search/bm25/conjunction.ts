/**
 * FTS5's bm25() top-k for an AND of phrases, computed from their postings held in
 * memory (term-index.ts). Every number is FTS5's: the same formula, operations in the same
 * order, over the same counts, so the scores are the same doubles; ties keep FTS5's order
 * (SQLite's ORDER BY … LIMIT keeps, among equal scores, the rows it visited first, and FTS5
 * visits rows by ascending rowid).
 */
import type { FtsHit, FtsWeights } from "../fts-store";
import type { Fts5Totals } from "./fts5-tables";

/** One phrase's rows (ascending) and, per row, its occurrences in citation, heading and body. */
export interface Postings {
  rows: Int32Array;
  /** 3 × rows.length: citation, heading, body occurrences of row i at 3i … 3i + 2. */
  counts: Uint16Array;
}

/** FTS5's constants (fts5_aux.c). */
const K1 = 1.2;
const B = 0.75;
/** FTS5's floor for the IDF of a phrase in more than half the rows. */
const IDF_MIN = 1e-6;

/** FTS5's IDF of a phrase found in `hits` of `rows` rows. */
function idfOf(rows: number, hits: number): number {
  const idf = Math.log((rows - hits + 0.5) / (hits + 0.5));
  return idf <= 0 ? IDF_MIN : idf;
}

/** First index at or after `from` whose row is ≥ `row` (galloping, then binary search). */
function seek(rows: Int32Array, from: number, row: number): number {
  let step = 1;
  let lo = from;
  let hi = from;
  while (hi < rows.length && rows[hi]! < row) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  hi = Math.min(hi, rows.length);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]! < row) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A bounded heap of the best hits so far; its root is the worst of them (highest bm25, then highest row). */
class TopHits {
  readonly #ids: number[] = [];
  readonly #scores: number[] = [];

  constructor(private readonly limit: number) {}

  /** Rows arrive by ascending id: a later row never displaces an equal score. */
  offer(chunkId: number, bm25: number): void {
    if (this.#ids.length < this.limit) {
      this.#ids.push(chunkId);
      this.#scores.push(bm25);
      this.#up(this.#ids.length - 1);
    } else if (bm25 < this.#scores[0]!) {
      this.#ids[0] = chunkId;
      this.#scores[0] = bm25;
      this.#down(0);
    }
  }

  sorted(): FtsHit[] {
    return this.#ids.map((chunkId, i) => ({ chunkId, bm25: this.#scores[i]! })).sort((a, b) => a.bm25 - b.bm25 || a.chunkId - b.chunkId);
  }

  #worse(i: number, j: number): boolean {
    const [a, b] = [this.#scores[i]!, this.#scores[j]!];
    return a > b || (a === b && this.#ids[i]! > this.#ids[j]!);
  }

  #swap(i: number, j: number): void {
    [this.#ids[i], this.#ids[j]] = [this.#ids[j]!, this.#ids[i]!];
    [this.#scores[i], this.#scores[j]] = [this.#scores[j]!, this.#scores[i]!];
  }

  #up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#worse(i, parent)) return;
      this.#swap(i, parent);
      i = parent;
    }
  }

  #down(i: number): void {
    for (;;) {
      const [l, r] = [2 * i + 1, 2 * i + 2];
      let worst = i;
      if (l < this.#ids.length && this.#worse(l, worst)) worst = l;
      if (r < this.#ids.length && this.#worse(r, worst)) worst = r;
      if (worst === i) return;
      this.#swap(i, worst);
      i = worst;
    }
  }
}

/**
 * The `limit` best rows holding every phrase (`phrases` in the MATCH's order) among those
 * `allowed` admits, scored as bm25(search_fts, citation, heading, body, 0). `rowTokens`:
 * each row's token count over every column, by row id.
 */
export function conjunctionTopK(
  phrases: readonly Postings[],
  totals: Fts5Totals,
  rowTokens: Int32Array,
  allowed: (row: number) => boolean,
  weights: FtsWeights,
  limit: number,
): FtsHit[] {
  if (phrases.length === 0 || limit <= 0) return [];
  const avgdl = totals.tokens / totals.rows;
  const idf = phrases.map((p) => idfOf(totals.rows, p.rows.length));
  const byLength = phrases.map((_, i) => i).sort((a, b) => phrases[a]!.rows.length - phrases[b]!.rows.length);
  const driver = phrases[byLength[0]!]!.rows;
  const cursors = new Int32Array(phrases.length);
  const top = new TopHits(limit);
  const w = [weights.citation, weights.heading, weights.body];
  next: for (let d = 0; d < driver.length; d++) {
    const row = driver[d]!;
    if (!allowed(row)) continue;
    cursors[byLength[0]!] = d;
    for (let k = 1; k < byLength.length; k++) {
      const i = byLength[k]!;
      const rows = phrases[i]!.rows;
      const at = seek(rows, cursors[i]!, row);
      cursors[i] = at;
      if (at === rows.length) break next;
      if (rows[at] !== row) continue next;
    }
    const lengthNorm = K1 * (1 - B + (B * rowTokens[row]!) / avgdl);
    let score = 0.0;
    for (let i = 0; i < phrases.length; i++) {
      const counts = phrases[i]!.counts;
      const base = 3 * cursors[i]!;
      // bm25() adds a column's weight once per occurrence, columns in order (xInst's order).
      let freq = 0.0;
      for (let c = 0; c < 3; c++) for (let n = counts[base + c]!; n > 0; n--) freq += w[c]!;
      score += idf[i]! * ((freq * (K1 + 1.0)) / (freq + lengthNorm));
    }
    top.offer(row, -1.0 * score);
  }
  return top.sorted();
}
