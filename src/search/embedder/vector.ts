/** Scales v to unit length in place; a zero vector stays zero (callers treat it as "no signal"). */
export function l2Normalise(v: Float32Array): Float32Array {
  let sumSquares = 0;
  for (let i = 0; i < v.length; i++) sumSquares += v[i]! * v[i]!;
  if (sumSquares === 0) return v;
  const scale = 1 / Math.sqrt(sumSquares);
  for (let i = 0; i < v.length; i++) v[i]! *= scale;
  return v;
}

export function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}
