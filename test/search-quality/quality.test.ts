import { afterAll, beforeAll, expect, test } from "bun:test";
import { buildEvalIndex, evaluate, QUESTIONS, unmatchedJudgments, type EvalIndex } from "./evaluate";

let index: EvalIndex;
beforeAll(async () => {
  index = await buildEvalIndex();
});
afterAll(() => index.close());

test("at least 40 judged questions, every judgment names a passage that exists", () => {
  expect(QUESTIONS.length).toBeGreaterThanOrEqual(40);
  expect(unmatchedJudgments(index)).toEqual([]);
});

test("hybrid beats BM25 alone and vector alone on nDCG@10 and recall@10", async () => {
  const bm25 = await evaluate(index, "bm25");
  const vector = await evaluate(index, "vector");
  const hybrid = await evaluate(index, "hybrid");
  expect(hybrid.ndcg).toBeGreaterThan(bm25.ndcg);
  expect(hybrid.ndcg).toBeGreaterThan(vector.ndcg);
  expect(hybrid.recall).toBeGreaterThan(bm25.recall);
  expect(hybrid.recall).toBeGreaterThan(vector.recall);
});
