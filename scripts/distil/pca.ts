/**
 * Principal components of row vectors by the cyclic Jacobi eigenvalue method on the
 * covariance matrix: exact, dependency-free, and fast enough for 512 dimensions.
 */
export type Pca = { mean: Float64Array; components: Float64Array[]; eigenvalues: number[] };

const JACOBI_SWEEPS_MAX = 50;

export function fitPca(rows: Float32Array[], componentCount: number): Pca {
  const dims = rows[0]!.length;
  if (componentCount > dims) throw new Error(`cannot keep ${componentCount} of ${dims} dimensions`);
  const mean = new Float64Array(dims);
  for (const r of rows) for (let i = 0; i < dims; i++) mean[i]! += r[i]! / rows.length;
  // Covariance, symmetric, as an array of rows.
  const a = Array.from({ length: dims }, () => new Float64Array(dims));
  const centred = new Float64Array(dims);
  for (const r of rows) {
    for (let i = 0; i < dims; i++) centred[i] = r[i]! - mean[i]!;
    for (let i = 0; i < dims; i++) {
      const ci = centred[i]!;
      const ai = a[i]!;
      for (let j = i; j < dims; j++) ai[j]! += ci * centred[j]!;
    }
  }
  for (let i = 0; i < dims; i++) for (let j = i; j < dims; j++) a[j]![i] = a[i]![j]! /= rows.length;
  const v = Array.from({ length: dims }, (_, i) => {
    const row = new Float64Array(dims);
    row[i] = 1;
    return row;
  });
  for (let sweep = 0; sweep < JACOBI_SWEEPS_MAX; sweep++) {
    let offDiagonal = 0;
    for (let p = 0; p < dims; p++) for (let q = p + 1; q < dims; q++) offDiagonal += a[p]![q]! ** 2;
    if (offDiagonal < 1e-22) break;
    for (let p = 0; p < dims; p++) {
      for (let q = p + 1; q < dims; q++) {
        const apq = a[p]![q]!;
        if (Math.abs(apq) < 1e-30) continue;
        const theta = (a[q]![q]! - a[p]![p]!) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        // A' = Jᵀ A J on rows/columns p and q.
        for (let k = 0; k < dims; k++) {
          const akp = a[k]![p]!;
          const akq = a[k]![q]!;
          a[k]![p] = c * akp - s * akq;
          a[k]![q] = s * akp + c * akq;
        }
        for (let k = 0; k < dims; k++) {
          const apk = a[p]![k]!;
          const aqk = a[q]![k]!;
          a[p]![k] = c * apk - s * aqk;
          a[q]![k] = s * apk + c * aqk;
        }
        // Eigenvectors as rows of v: v_p, v_q rotate together.
        const vp = v[p]!;
        const vq = v[q]!;
        for (let k = 0; k < dims; k++) {
          const x = vp[k]!;
          const y = vq[k]!;
          vp[k] = c * x - s * y;
          vq[k] = s * x + c * y;
        }
      }
    }
  }
  const order = Array.from({ length: dims }, (_, i) => i).sort((i, j) => a[j]![j]! - a[i]![i]!);
  const kept = order.slice(0, componentCount);
  return { mean, components: kept.map((i) => v[i]!), eigenvalues: kept.map((i) => a[i]![i]!) };
}

export function project(pca: Pca, row: Float32Array): Float32Array {
  const out = new Float32Array(pca.components.length);
  pca.components.forEach((component, k) => {
    let sum = 0;
    for (let i = 0; i < row.length; i++) sum += (row[i]! - pca.mean[i]!) * component[i]!;
    out[k] = sum;
  });
  return out;
}
