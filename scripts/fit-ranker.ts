/**
 * Fits the learned ranker (src/search/rank/weights.json) on the TUNING questions of
 * test/search-quality/questions.json only; the test questions are never read here.
 *
 * For each tuning question the search gathers its stage-one candidates and their features
 * (src/search/rank/features.ts); a linear model over standardised features is fitted with a
 * pairwise logistic loss (a more relevant passage should outscore a less relevant one, each
 * question weighing alike) and an L2 penalty whose strength is chosen by 5-fold
 * cross-validation over the tuning questions (nDCG@10 of the re-ranked candidates).
 *
 *   bun scripts/fit-ranker.ts [--write]      prints the cross-validation; --write saves the weights
 */
import { join } from "node:path";
import { untitledPath } from "../src/search/corpus/structure";
import { FEATURES } from "../src/search/rank/features";
import type { RankerModel } from "../src/search/rank/model";
import { gatherCandidates } from "../src/search/candidates";
import { candidateFeatureRows } from "../src/search/rerank";
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from "../src/search/tuning";
import { buildEvalIndex, EVAL_ORG_ID, gradeOfPassage, questionsOf, scoreRanking, type EvalIndex, type Question } from "../test/search-quality/evaluate";

const FOLDS = 5;
const LAMBDAS = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3];
const ITERATIONS = 400;
const LEARNING_RATE = 0.05;

interface QuestionRows {
  question: Question;
  paths: string[];
  grades: number[];
  features: Float64Array[];
}

export async function collectRows(index: EvalIndex, questions: readonly Question[], tuning: SearchTuning): Promise<QuestionRows[]> {
  const out: QuestionRows[] = [];
  for (const q of questions) {
    const request = { orgId: EVAL_ORG_ID, query: q.query, jurisdictions: q.jurisdictions ?? index.allJurisdictions, topK: 10 };
    const gathered = await gatherCandidates(index.deps, request, tuning, "hybrid");
    const rows = await candidateFeatureRows(index.deps.searchIndex, gathered.ranked.slice(0, tuning.rerankCandidates), gathered);
    out.push({
      question: q,
      paths: rows.map((r) => r.citationPath),
      grades: rows.map((r) => gradeOfPassage(untitledPath(r.citationPath), q.relevant)),
      features: rows.map((r) => r.features),
    });
  }
  return out;
}

function standardiser(rows: readonly QuestionRows[]): { mean: number[]; scale: number[] } {
  const all = rows.flatMap((r) => r.features);
  const mean = FEATURES.map((_, i) => all.reduce((s, f) => s + f[i]!, 0) / Math.max(1, all.length));
  const scale = FEATURES.map((_, i) => {
    const variance = all.reduce((s, f) => s + (f[i]! - mean[i]!) ** 2, 0) / Math.max(1, all.length);
    return variance > 1e-12 ? Math.sqrt(variance) : 1;
  });
  return { mean, scale };
}

/** Pairwise logistic regression by gradient descent (Adam), every question weighing alike. */
export function fitWeights(rows: readonly QuestionRows[], mean: readonly number[], scale: readonly number[], lambda: number): number[] {
  const d = FEATURES.length;
  const z = rows.map((r) => r.features.map((f) => Array.from(f, (x, i) => (x - mean[i]!) / scale[i]!)));
  const w = new Array<number>(d).fill(0);
  const m = new Array<number>(d).fill(0);
  const v = new Array<number>(d).fill(0);
  const usable = rows.map((r, qi) => ({ r, qi })).filter(({ r }) => new Set(r.grades).size > 1);
  for (let t = 1; t <= ITERATIONS; t++) {
    const grad = w.map((x) => 2 * lambda * x);
    for (const { r, qi } of usable) {
      const scores = z[qi]!.map((f) => f.reduce((s, x, i) => s + x * w[i]!, 0));
      let pairs = 0;
      const g = new Array<number>(d).fill(0);
      for (let a = 0; a < r.grades.length; a++) {
        for (let b = 0; b < r.grades.length; b++) {
          if (r.grades[a]! <= r.grades[b]!) continue;
          pairs++;
          const p = 1 / (1 + Math.exp(scores[a]! - scores[b]!)); // d/ds of log(1 + e^-(sa - sb))
          const fa = z[qi]![a]!;
          const fb = z[qi]![b]!;
          for (let i = 0; i < d; i++) g[i]! -= p * (fa[i]! - fb[i]!);
        }
      }
      for (let i = 0; i < d; i++) grad[i]! += g[i]! / pairs / usable.length;
    }
    for (let i = 0; i < d; i++) {
      m[i] = 0.9 * m[i]! + 0.1 * grad[i]!;
      v[i] = 0.999 * v[i]! + 0.001 * grad[i]! ** 2;
      w[i]! -= (LEARNING_RATE * (m[i]! / (1 - 0.9 ** t))) / (Math.sqrt(v[i]! / (1 - 0.999 ** t)) + 1e-8);
    }
  }
  return w;
}

export function rerankedNdcg(rows: readonly QuestionRows[], model: RankerModel, index: EvalIndex): number {
  let sum = 0;
  for (const r of rows) {
    const scored = r.features.map((f, i) => ({ path: r.paths[i]!, s: f.reduce((acc, x, j) => acc + model.weights[j]! * ((x - model.mean[j]!) / model.scale[j]!), 0) }));
    scored.sort((a, b) => b.s - a.s);
    sum += scoreRanking(scored.map((x) => x.path), r.question, index.corpusPaths).ndcg;
  }
  return sum / Math.max(1, rows.length);
}

function foldOf(_q: Question, i: number): number {
  return i % FOLDS;
}

if (import.meta.main) {
  const index = await buildEvalIndex();
  try {
    // Folds stratified by category: questions of each category dealt round-robin.
    const tuningQuestions = questionsOf("tuning").sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.id < b.id ? -1 : 1));
    const rows = await collectRows(index, tuningQuestions, DEFAULT_SEARCH_TUNING);
    const results: { lambda: number; cv: number }[] = [];
    for (const lambda of LAMBDAS) {
      let total = 0;
      for (let k = 0; k < FOLDS; k++) {
        const train = rows.filter((_, i) => foldOf(rows[i]!.question, i) !== k);
        const held = rows.filter((_, i) => foldOf(rows[i]!.question, i) === k);
        const { mean, scale } = standardiser(train);
        const weights = fitWeights(train, mean, scale, lambda);
        total += rerankedNdcg(held, { features: FEATURES, mean, scale, weights }, index) * held.length;
      }
      results.push({ lambda, cv: total / rows.length });
      console.log(`lambda ${lambda}: cross-validated nDCG@10 of the re-ranked candidates ${(total / rows.length).toFixed(4)}`);
    }
    const best = results.reduce((a, b) => (b.cv > a.cv ? b : a));
    const { mean, scale } = standardiser(rows);
    const weights = fitWeights(rows, mean, scale, best.lambda);
    const model = { features: [...FEATURES], mean, scale, weights };
    console.log(`chosen lambda ${best.lambda} (cv ${best.cv.toFixed(4)}); fitted on all ${rows.length} tuning questions: ${rerankedNdcg(rows, model, index).toFixed(4)}`);
    for (const [i, f] of FEATURES.entries()) console.log(`  ${f.padEnd(26)} ${weights[i]!.toFixed(3)}`);
    if (process.argv.includes("--write")) {
      const round = (xs: number[]) => xs.map((x) => Math.round(x * 1e6) / 1e6);
      const file = {
        about: `Fitted by scripts/fit-ranker.ts on the ${rows.length} tuning questions only; L2 ${best.lambda} chosen by ${FOLDS}-fold cross-validation (nDCG@10 ${best.cv.toFixed(3)}).`,
        features: model.features,
        mean: round(mean),
        scale: round(scale),
        weights: round(weights),
      };
      await Bun.write(join(import.meta.dir, "../src/search/rank/weights.json"), `${JSON.stringify(file, null, 1)}\n`);
      console.log("wrote src/search/rank/weights.json");
    }
  } finally {
    index.close();
  }
}
