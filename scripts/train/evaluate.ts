/**
 * Dense-only retrieval on judged questions, computed in memory the way the product ranks a
 * vector-only search (cosine over the passages of the requested jurisdictions), scored with
 * the quality benchmark's own nDCG@10 / recall@10 (test/search-quality/evaluate.ts).
 */
import { untitledPath } from "../../src/search/corpus/structure.ts";
import { gradeOfPassage, questionsOf, scoreRanking, type Question } from "../../test/search-quality/evaluate.ts";
import { embeddingText, type Corpus } from "./passages.ts";

const K = 10;

export type TuningQuestion = Question;

/** The tuning half of the judged questions: the test half is never read here. */
export function loadTuningQuestions(): { source: string; questions: TuningQuestion[] } {
  return { source: "test/search-quality/questions.json (tuning half)", questions: questionsOf("tuning") };
}

/** Citation paths of the passages that answer `q` (grade 2). */
export function answeringPaths(corpus: Corpus, q: TuningQuestion): string[] {
  return corpus.passages.map((p) => p.citationPath).filter((path) => gradeOfPassage(untitledPath(path), q.relevant) >= 2);
}

export type CategoryScores = Map<string, { ndcg: number; recall: number; count: number }>;

/** Mean nDCG@10 / recall@10 per category, plus "all". */
export function denseScores(corpus: Corpus, questions: TuningQuestion[], embed: (text: string) => Float32Array): CategoryScores {
  const paths = corpus.passages.map((p) => p.citationPath);
  const vectors = corpus.passages.map((p) => embed(embeddingText(corpus, p)));
  const out: CategoryScores = new Map();
  const add = (category: string, ndcg: number, recall: number) => {
    const s = out.get(category) ?? { ndcg: 0, recall: 0, count: 0 };
    out.set(category, { ndcg: s.ndcg + ndcg, recall: s.recall + recall, count: s.count + 1 });
  };
  for (const q of questions) {
    const qv = embed(q.query);
    const allowed = q.jurisdictions === undefined ? undefined : new Set(q.jurisdictions);
    const ranked = corpus.passages
      .map((p, i) => ({ i, score: allowed && !p.jurisdictions.some((j) => allowed.has(j)) ? -Infinity : dot(qv, vectors[i]!) }))
      .filter((r) => r.score > -Infinity)
      .sort((a, b) => b.score - a.score || a.i - b.i)
      .slice(0, K)
      .map((r) => paths[r.i]!);
    const s = scoreRanking(ranked, q, paths.map(untitledPath));
    add("all", s.ndcg, s.recall);
    add(q.category, s.ndcg, s.recall);
  }
  for (const [k, s] of out) out.set(k, { ndcg: s.ndcg / s.count, recall: s.recall / s.count, count: s.count });
  return out;
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

export function formatScores(label: string, scores: CategoryScores): string {
  const names = ["all", ...[...scores.keys()].filter((k) => k !== "all").sort()];
  return `${label}: ${names.map((n) => `${n} (${scores.get(n)!.count}) ${scores.get(n)!.ndcg.toFixed(3)}/${scores.get(n)!.recall.toFixed(3)}`).join("  ")}`;
}

/**
 * Share of the exact 256-d top 10 that the top `shortlist` by an int8 copy of the leading
 * `prefixDims` dimensions holds (vec0's L2 over vec_quantize_int8(…, 'unit')).
 */
export function shortlistRecall(docs: Float32Array[], queries: Float32Array[], prefixDims: number, shortlist: number): number {
  const quantise = (v: Float32Array) => Int8Array.from(v.subarray(0, prefixDims), (x) => Math.max(-128, Math.min(127, Math.round(x * 127))));
  const docInts = docs.map(quantise);
  let held = 0;
  for (const q of queries) {
    const qi = quantise(q);
    const exact = docs.map((d, i) => ({ i, s: dot(q, d) })).sort((a, b) => b.s - a.s).slice(0, K).map((r) => r.i);
    const l2 = (a: Int8Array) => {
      let s = 0;
      for (let k = 0; k < a.length; k++) s += (a[k]! - qi[k]!) ** 2;
      return s;
    };
    const near = new Set(docInts.map((d, i) => ({ i, s: l2(d) })).sort((a, b) => a.s - b.s).slice(0, shortlist).map((r) => r.i));
    held += exact.filter((i) => near.has(i)).length;
  }
  return held / (queries.length * K);
}
