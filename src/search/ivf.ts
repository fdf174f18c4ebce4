/**
 * Inverted-file (IVF) coarse quantiser for the shared corpus's vectors: k-means centroids
 * split the vectors into clusters (vec0 partitions), and a query scans only the clusters
 * whose centroids are nearest to it. Pure arithmetic; store.ts keeps the centroids.
 *
 * Euclidean k-means, not spherical: it is translation invariant, so the large direction
 * every passage of this embedder shares (mean-vector norm 0.85) does not swamp the
 * differences the clusters should capture. Vectors and queries are unit length, so the
 * nearest centroid by L2 also ranks clusters by cosine.
 */

/** Deterministic pseudo-random numbers (mulberry32): the same vectors give the same clusters. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Centroids {
  count: number;
  dimensions: number;
  /** count × dimensions, row-major. */
  values: Float32Array;
  /** |c|² / 2 per centroid: argmin |x − c|² = argmax (x·c − |c|²/2). */
  halfNormsSquared: Float32Array;
}

export function makeCentroids(values: Float32Array, dimensions: number): Centroids {
  const count = values.length / dimensions;
  const halfNormsSquared = new Float32Array(count);
  for (let c = 0; c < count; c++) {
    let s = 0;
    for (let d = 0, o = c * dimensions; d < dimensions; d++) s += values[o + d]! * values[o + d]!;
    halfNormsSquared[c] = s / 2;
  }
  return { count, dimensions, values, halfNormsSquared };
}

function affinity(centroids: Centroids, c: number, v: Float32Array): number {
  const { values, dimensions } = centroids;
  const o = c * dimensions;
  // Four accumulators: independent adds run in parallel (dimensions is a multiple of 8).
  let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (let d = 0; d < dimensions; d += 4) {
    s0 += values[o + d]! * v[d]!;
    s1 += values[o + d + 1]! * v[d + 1]!;
    s2 += values[o + d + 2]! * v[d + 2]!;
    s3 += values[o + d + 3]! * v[d + 3]!;
  }
  return s0 + s1 + s2 + s3 - centroids.halfNormsSquared[c]!;
}

export function nearestCentroid(centroids: Centroids, v: Float32Array): number {
  let best = 0;
  let bestScore = -Infinity;
  for (let c = 0; c < centroids.count; c++) {
    const s = affinity(centroids, c, v);
    if (s > bestScore) {
      bestScore = s;
      best = c;
    }
  }
  return best;
}

/** The `probes` clusters nearest to `v`, nearest first (cluster numbers are 0-based indexes). */
export function nearestCentroids(centroids: Centroids, v: Float32Array, probes: number): number[] {
  const scores = new Float32Array(centroids.count);
  for (let c = 0; c < centroids.count; c++) scores[c] = affinity(centroids, c, v);
  const order = Array.from({ length: centroids.count }, (_, c) => c);
  order.sort((a, b) => scores[b]! - scores[a]!);
  return order.slice(0, Math.min(probes, centroids.count));
}

export interface TrainOptions {
  clusters: number;
  /** Mini-batch rounds (Sculley 2010): each moves centroids toward a random batch's members. */
  rounds: number;
  batchVectors: number;
  seed: number;
}

/**
 * Mini-batch k-means over a sample. Seeds are distinct sample vectors chosen by the seeded
 * generator; each centroid's step size is 1/(vectors it has absorbed), so it settles.
 */
export function trainCentroids(sample: readonly Float32Array[], dimensions: number, options: TrainOptions): Centroids {
  const clusters = Math.min(options.clusters, sample.length);
  const next = seededRandom(options.seed);
  const values = new Float32Array(clusters * dimensions);
  const picked = new Set<number>();
  for (let c = 0; c < clusters; c++) {
    let i = Math.floor(next() * sample.length);
    while (picked.has(i)) i = (i + 1) % sample.length;
    picked.add(i);
    values.set(sample[i]!, c * dimensions);
  }
  let centroids = makeCentroids(values, dimensions);
  const absorbed = new Float64Array(clusters);
  const batch = Math.min(options.batchVectors, sample.length);
  for (let round = 0; round < options.rounds; round++) {
    const members = Array.from({ length: batch }, () => sample[Math.floor(next() * sample.length)]!);
    const owners = members.map((v) => nearestCentroid(centroids, v));
    members.forEach((v, m) => {
      const c = owners[m]!;
      absorbed[c]! += 1;
      const rate = 1 / absorbed[c]!;
      const o = c * dimensions;
      for (let d = 0; d < dimensions; d++) values[o + d]! += rate * (v[d]! - values[o + d]!);
    });
    centroids = makeCentroids(values, dimensions);
  }
  return centroids;
}
