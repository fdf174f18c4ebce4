/**
 * The static table as a trainable model: a text is a bag of (row, weight), its vector the
 * L2-normalised weighted sum of rows, exactly as src/search/embedder/static.ts computes it.
 * Trained with a symmetric in-batch InfoNCE loss and an L2 pull towards the initial rows;
 * gradients by hand, sparse (lazy) Adam over the rows a batch touches.
 */
import { STATIC_TEXT_CHARS_MAX, type StaticEmbedder } from "../../src/search/embedder/static.ts";
import { wordsOf } from "../../src/search/embedder/tokens.ts";

export type Bag = { rows: Int32Array; weights: Float32Array };

/** Bags by text: the same passage appears in many pairs, and splitting words dominates otherwise. */
export class Bagger {
  private readonly memo = new Map<string, Bag>();

  constructor(private readonly tokeniser: StaticEmbedder) {}

  bagOf(text: string): Bag {
    let bag = this.memo.get(text);
    if (bag !== undefined) return bag;
    const weights = new Map<number, number>();
    for (const word of wordsOf(text.slice(0, STATIC_TEXT_CHARS_MAX))) {
      const rows = this.tokeniser.rowsOfWord(word);
      for (const row of rows) weights.set(row, (weights.get(row) ?? 0) + 1 / rows.length);
    }
    bag = { rows: Int32Array.from(weights.keys()), weights: Float32Array.from(weights.values()) };
    this.memo.set(text, bag);
    return bag;
  }
}

export type TrainSettings = {
  temperature: number;
  learningRate: number;
  /** Weight of ½‖δ_row‖², per touched row per step: each row stays near its mapped initial row. */
  pull: number;
  /** Learning rate of the shared map W (0 freezes it at the identity). */
  mapLearningRate: number;
  /** Weight of ½‖W − I‖². */
  mapPull: number;
};

const ADAM_BETA1 = 0.9;
const ADAM_BETA2 = 0.999;
const ADAM_EPSILON = 1e-8;

/** Adam moments of one parameter array. */
class Adam {
  readonly m: Float32Array;
  readonly v: Float32Array;

  constructor(size: number) {
    this.m = new Float32Array(size);
    this.v = new Float32Array(size);
  }

  /** params[k] -= step for k in [from, to); returns nothing, zeroes grad there. */
  apply(params: Float32Array, grad: Float32Array, from: number, to: number, lr: number, c1: number, c2: number): void {
    for (let k = from; k < to; k++) {
      const g = grad[k]!;
      grad[k] = 0;
      const m = (this.m[k] = ADAM_BETA1 * this.m[k]! + (1 - ADAM_BETA1) * g);
      const v = (this.v[k] = ADAM_BETA2 * this.v[k]! + (1 - ADAM_BETA2) * g * g);
      params[k]! -= (lr * (m / c1)) / (Math.sqrt(v / c2) + ADAM_EPSILON);
    }
  }
}

/**
 * row_r = W · x_r + δ_r, with x_r the initial row. The shared map W moves every word the
 * same way, so words no training pair mentions (everyday query words, an organisation's
 * vocabulary) follow the domain words they were near; δ_r is each row's own correction.
 */
export class TableModel {
  /** W, row-major: s = W x. */
  readonly map: Float32Array;
  readonly delta: Float32Array;
  private readonly initial: Float32Array;
  private readonly mapGrad: Float32Array;
  private readonly deltaGrad: Float32Array;
  private readonly mapAdam: Adam;
  private readonly deltaAdam: Adam;
  private readonly touched: Uint8Array;
  private step = 0;

  constructor(
    initialRows: Float32Array,
    readonly dims: number,
  ) {
    this.initial = initialRows;
    this.map = new Float32Array(dims * dims);
    for (let i = 0; i < dims; i++) this.map[i * dims + i] = 1;
    this.delta = new Float32Array(initialRows.length);
    this.mapGrad = new Float32Array(dims * dims);
    this.deltaGrad = new Float32Array(initialRows.length);
    this.mapAdam = new Adam(dims * dims);
    this.deltaAdam = new Adam(initialRows.length);
    this.touched = new Uint8Array(initialRows.length / dims);
  }

  /** Every row as trained: W x_r + δ_r. */
  rows(): Float32Array {
    const d = this.dims;
    const out = new Float32Array(this.initial.length);
    for (let r = 0; r < this.initial.length / d; r++) {
      for (let i = 0; i < d; i++) {
        let s = this.delta[r * d + i]!;
        for (let k = 0; k < d; k++) s += this.map[i * d + k]! * this.initial[r * d + k]!;
        out[r * d + i] = s;
      }
    }
    return out;
  }

  /** x = Σ w x_r (initial rows) into x[offset…]. */
  private initialSum(bag: Bag, x: Float32Array, offset: number): void {
    const d = this.dims;
    x.fill(0, offset, offset + d);
    for (let j = 0; j < bag.rows.length; j++) {
      const base = bag.rows[j]! * d;
      const w = bag.weights[j]!;
      for (let i = 0; i < d; i++) x[offset + i]! += w * this.initial[base + i]!;
    }
  }

  /** Writes the unit vector of `bag` into out[offset…] (and its initial-row sum into x) and returns the sum's length. */
  embedInto(bag: Bag, out: Float32Array, offset = 0, x = new Float32Array(this.dims), xOffset = 0): number {
    const d = this.dims;
    this.initialSum(bag, x, xOffset);
    for (let i = 0; i < d; i++) {
      let s = 0;
      for (let k = 0; k < d; k++) s += this.map[i * d + k]! * x[xOffset + k]!;
      out[offset + i] = s;
    }
    for (let j = 0; j < bag.rows.length; j++) {
      const base = bag.rows[j]! * d;
      const w = bag.weights[j]!;
      for (let i = 0; i < d; i++) out[offset + i]! += w * this.delta[base + i]!;
    }
    let sq = 0;
    for (let i = 0; i < d; i++) sq += out[offset + i]! ** 2;
    const norm = Math.sqrt(sq);
    if (norm > 0) for (let i = 0; i < d; i++) out[offset + i]! /= norm;
    return norm;
  }

  embed(bag: Bag): Float32Array {
    const out = new Float32Array(this.dims);
    this.embedInto(bag, out);
    return out;
  }

  /**
   * One optimiser step on a batch of (query, doc) pairs. Pairs sharing a key are masked out
   * of each other's negatives. `pairWeights` scale each pair's share of the loss.
   * Returns the batch's mean loss.
   */
  trainBatch(queries: Bag[], docs: Bag[], keys: string[], pairWeights: Float32Array, settings: TrainSettings): number {
    const b = queries.length;
    const d = this.dims;
    const eq = new Float32Array(b * d);
    const ed = new Float32Array(b * d);
    const xq = new Float32Array(b * d);
    const xd = new Float32Array(b * d);
    const nq = new Float32Array(b);
    const nd = new Float32Array(b);
    for (let i = 0; i < b; i++) {
      nq[i] = this.embedInto(queries[i]!, eq, i * d, xq, i * d);
      nd[i] = this.embedInto(docs[i]!, ed, i * d, xd, i * d);
    }
    const invT = 1 / settings.temperature;
    const z = new Float32Array(b * b);
    for (let i = 0; i < b; i++) {
      for (let j = 0; j < b; j++) {
        if (i !== j && keys[i] === keys[j]) {
          z[i * b + j] = -Infinity;
          continue;
        }
        let s = 0;
        for (let k = 0; k < d; k++) s += eq[i * d + k]! * ed[j * d + k]!;
        z[i * b + j] = s * invT;
      }
    }
    // dz = ½ (row softmax − I) · w_i + ½ (column softmax − I) · w_j, over the batch.
    const dz = new Float32Array(b * b);
    let loss = 0;
    let weightSum = 0;
    for (let i = 0; i < b; i++) weightSum += pairWeights[i]!;
    const scale = 1 / weightSum;
    for (let i = 0; i < b; i++) {
      let max = -Infinity;
      for (let j = 0; j < b; j++) max = Math.max(max, z[i * b + j]!);
      let sum = 0;
      for (let j = 0; j < b; j++) sum += Math.exp(z[i * b + j]! - max);
      const w = pairWeights[i]! * scale * 0.5;
      loss += w * (Math.log(sum) + max - z[i * b + i]!);
      for (let j = 0; j < b; j++) dz[i * b + j]! += w * (Math.exp(z[i * b + j]! - max) / sum - (i === j ? 1 : 0));
    }
    for (let j = 0; j < b; j++) {
      let max = -Infinity;
      for (let i = 0; i < b; i++) max = Math.max(max, z[i * b + j]!);
      let sum = 0;
      for (let i = 0; i < b; i++) sum += Math.exp(z[i * b + j]! - max);
      const w = pairWeights[j]! * scale * 0.5;
      loss += w * (Math.log(sum) + max - z[j * b + j]!);
      for (let i = 0; i < b; i++) dz[i * b + j]! += w * (Math.exp(z[i * b + j]! - max) / sum - (i === j ? 1 : 0));
    }
    const gq = new Float32Array(d);
    const gd = new Float32Array(d);
    for (let i = 0; i < b; i++) {
      gq.fill(0);
      gd.fill(0);
      for (let j = 0; j < b; j++) {
        const a = dz[i * b + j]! * invT;
        const c = dz[j * b + i]! * invT;
        for (let k = 0; k < d; k++) {
          gq[k]! += a * ed[j * d + k]!;
          gd[k]! += c * eq[j * d + k]!;
        }
      }
      this.backward(queries[i]!, eq, xq, i * d, nq[i]!, gq);
      this.backward(docs[i]!, ed, xd, i * d, nd[i]!, gd);
    }
    this.update(settings);
    return loss;
  }

  /** Through the normalisation (g − (g·e) e) / ‖s‖, into W (g_s xᵀ) and every δ row of the bag. */
  private backward(bag: Bag, e: Float32Array, x: Float32Array, offset: number, norm: number, g: Float32Array): void {
    if (norm === 0) return;
    const d = this.dims;
    let ge = 0;
    for (let k = 0; k < d; k++) ge += g[k]! * e[offset + k]!;
    const gs = new Float32Array(d);
    for (let k = 0; k < d; k++) gs[k] = (g[k]! - ge * e[offset + k]!) / norm;
    for (let i = 0; i < d; i++) {
      const gi = gs[i]!;
      for (let k = 0; k < d; k++) this.mapGrad[i * d + k]! += gi * x[offset + k]!;
    }
    for (let r = 0; r < bag.rows.length; r++) {
      const row = bag.rows[r]!;
      const w = bag.weights[r]!;
      const base = row * d;
      for (let k = 0; k < d; k++) this.deltaGrad[base + k]! += w * gs[k]!;
      this.touched[row] = 1;
    }
  }

  private update({ learningRate, pull, mapLearningRate, mapPull }: TrainSettings): void {
    this.step++;
    const d = this.dims;
    const c1 = 1 - ADAM_BETA1 ** this.step;
    const c2 = 1 - ADAM_BETA2 ** this.step;
    if (mapLearningRate > 0) {
      for (let i = 0; i < d; i++) for (let k = 0; k < d; k++) this.mapGrad[i * d + k]! += mapPull * (this.map[i * d + k]! - (i === k ? 1 : 0));
      this.mapAdam.apply(this.map, this.mapGrad, 0, d * d, mapLearningRate, c1, c2);
    } else {
      this.mapGrad.fill(0);
    }
    for (let row = 0; row < this.touched.length; row++) {
      if (this.touched[row] === 0) continue;
      this.touched[row] = 0;
      const base = row * d;
      for (let k = base; k < base + d; k++) this.deltaGrad[k]! += pull * this.delta[k]!;
      this.deltaAdam.apply(this.delta, this.deltaGrad, base, base + d, learningRate, c1, c2);
    }
  }
}
