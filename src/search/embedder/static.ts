import tablePath from "../../../data/embeddings/regkb-static-v2.bin" with { type: "file" };
import { readAsset } from "../../platform/assets";
import { decodeStaticTable, type StaticTable } from "./static-table.ts";
import { stem, wordsOf } from "./tokens.ts";
import type { Embedder } from "./types.ts";
import { l2Normalise } from "./vector.ts";

/** Text beyond this is ignored: a chunk is a few thousand characters, and cost is linear. */
export const STATIC_TEXT_CHARS_MAX = 200_000;
/** Sentencepiece scores are log-probabilities; a character no piece covers costs this much. */
const UNKNOWN_CHAR_SCORE = -30;
const WORD_START = "\u2581";
/** Distinct words remembered with their rows; past this the memo starts over (bounded memory). */
const WORD_MEMO_ENTRIES_MAX = 100_000;

/**
 * The table's dimensions are principal components, largest variance first: over 100k
 * passages, the nearest 50 by the first 128 held the exact top 10 (recall 1.000) and
 * halved the int8 scan (16 clusters: p50 8.8 ms instead of 15.1).
 */
const PCA_SHORTLIST_DIMENSIONS = 128;

/**
 * The fast default: a sentence is the weighted mean of per-word vectors (Model2Vec style,
 * then trained for this domain: data/embeddings/README.md). Known words are looked up by
 * stem; unknown words are split into the teacher's sentencepiece pieces, so any input gets a
 * vector in microseconds.
 */
export class StaticEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly shortlistDimensions: number;
  private readonly wordRows = new Map<string, number>();
  private readonly pieceRows = new Map<string, number>();
  private readonly wordCount: number;
  private readonly pieceScores: Float32Array;
  private readonly pieceCharsMax: number;
  private readonly rowScales: Float32Array;
  private readonly rows: Int8Array;
  /** word → the rows it adds (one row, or its pieces); stemming and splitting dominate otherwise. */
  private readonly wordMemo = new Map<string, readonly number[]>();
  /** Returned for text with no words at all, so callers always get a unit vector. */
  private readonly emptyVector: Float32Array;

  constructor(table: StaticTable) {
    this.id = table.header.id;
    this.dimensions = table.header.dimensions;
    this.shortlistDimensions = Math.min(this.dimensions, PCA_SHORTLIST_DIMENSIONS);
    this.wordCount = table.header.wordCount;
    table.words.forEach((w, i) => this.wordRows.set(w, i));
    let pieceCharsMax = 1;
    table.pieces.forEach((p, i) => {
      this.pieceRows.set(p, table.header.wordCount + i);
      pieceCharsMax = Math.max(pieceCharsMax, [...p].length);
    });
    this.pieceCharsMax = pieceCharsMax;
    this.pieceScores = table.pieceScores;
    this.rowScales = table.rowScales;
    this.rows = table.rows;
    this.emptyVector = new Float32Array(this.dimensions).fill(1 / Math.sqrt(this.dimensions));
  }

  /** The table shipped inside the binary (data/embeddings/). */
  static async load(path: string = tablePath): Promise<StaticEmbedder> {
    return new StaticEmbedder(decodeStaticTable(await readAsset(path)));
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  embedOne(text: string): Float32Array {
    const sum = new Float32Array(this.dimensions);
    for (const word of wordsOf(text.slice(0, STATIC_TEXT_CHARS_MAX))) {
      const rows = this.rowsOfWord(word);
      // An unknown word counts as one word however many pieces it splits into.
      for (const row of rows) this.addRow(sum, row, 1 / rows.length);
    }
    const vector = l2Normalise(sum);
    return vector.some((x) => x !== 0) ? vector : this.emptyVector.slice();
  }

  /** The table rows one word adds to a sentence: its own row, or its pieces (each weighing 1 / count). */
  rowsOfWord(word: string): readonly number[] {
    let rows = this.wordMemo.get(word);
    if (rows !== undefined) return rows;
    const row = this.wordRows.get(stem(word));
    rows = row !== undefined ? [row] : this.splitIntoPieces(word);
    if (this.wordMemo.size >= WORD_MEMO_ENTRIES_MAX) this.wordMemo.clear();
    this.wordMemo.set(word, rows);
    return rows;
  }

  private addRow(sum: Float32Array, row: number, weight: number): void {
    const scale = this.rowScales[row]! * weight;
    const offset = row * this.dimensions;
    for (let d = 0; d < this.dimensions; d++) sum[d]! += this.rows[offset + d]! * scale;
  }

  /** Most probable sentencepiece split of "▁word" (Viterbi over the teacher's unigram scores). */
  private splitIntoPieces(word: string): number[] {
    const chars = [...(WORD_START + word)];
    const n = chars.length;
    const bestScore = new Float64Array(n + 1).fill(-Infinity);
    const bestStart = new Int32Array(n + 1);
    const bestRow = new Int32Array(n + 1).fill(-1);
    bestScore[0] = 0;
    for (let end = 1; end <= n; end++) {
      for (let start = Math.max(0, end - this.pieceCharsMax); start < end; start++) {
        if (bestScore[start] === -Infinity) continue;
        const row = this.pieceRows.get(chars.slice(start, end).join(""));
        const known = row !== undefined;
        if (!known && end - start > 1) continue;
        const score = bestScore[start]! + (known ? this.pieceScores[row - this.wordCount]! : UNKNOWN_CHAR_SCORE);
        if (score > bestScore[end]!) {
          bestScore[end] = score;
          bestStart[end] = start;
          bestRow[end] = known ? row : -1;
        }
      }
    }
    const rows: number[] = [];
    for (let end = n; end > 0; end = bestStart[end]!) if (bestRow[end]! >= 0) rows.push(bestRow[end]!);
    return rows.reverse();
  }
}
