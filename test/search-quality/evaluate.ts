/**
 * Search quality on the judged questions (questions.json) over the sample corpus:
 * nDCG@10 and recall@10 for BM25 only, vector only and hybrid.
 *
 *   bun test/search-quality/evaluate.ts            figures for every method and split
 *   bun test/search-quality/evaluate.ts --tune     grid search of fusion weights on the dev split
 *
 * nDCG@10: graded gains (2 = answers, 1 = related), log2 discount, ideal = the corpus's best 10.
 * recall@10: answering (grade 2) passages in the top 10 / min(10, answering passages in the corpus).
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/open";
import { citationKeysOfPath } from "../../src/search/citations";
import { importSampleCorpus, loadSampleCorpus } from "../../src/search/corpus/import";
import { createEmbedder } from "../../src/search/embedder/index";
import { DEFAULT_SEARCH_TUNING, searchKnowledgeBase, type SearchDeps, type SearchMethod, type SearchTuning } from "../../src/search/service";
import questionsFile from "./questions.json";

export interface Judgment {
  key?: string;
  path?: string;
  grade: number;
}
export interface Question {
  id: string;
  split: "dev" | "held-out";
  kind: string;
  query: string;
  jurisdictions?: string[];
  relevant: Judgment[];
}
export const QUESTIONS = questionsFile.questions as Question[];
export const EVAL_ORG_ID = "eval-org";
const K = 10;

export function gradeOf(citationPath: string, judgments: readonly Judgment[]): number {
  const keys = new Set(citationKeysOfPath(citationPath));
  let grade = 0;
  for (const j of judgments) {
    const hit = (j.key !== undefined && keys.has(j.key)) || (j.path !== undefined && new RegExp(j.path).test(citationPath));
    if (hit) grade = Math.max(grade, j.grade);
  }
  return grade;
}

export interface EvalIndex {
  deps: SearchDeps;
  allJurisdictions: string[];
  /** Every passage's citation path, for ideal rankings and to check each judgment matches something. */
  corpusPaths: string[];
  close(): void;
}

/** Builds the index once in a temporary folder: sample corpus, static embedder, one org with everything enabled. */
export async function buildEvalIndex(): Promise<EvalIndex> {
  const dir = join(tmpdir(), `regkb-eval-${process.pid}-${Date.now()}`);
  const db = await openDatabase(dir);
  const embedder = await createEmbedder({ kind: "static", timeoutMs: 30_000, batchTextsMax: 64 });
  const deps = { db, embedder };
  await importSampleCorpus(deps);
  db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, 'Evaluation', 0)").run(EVAL_ORG_ID);
  db.query("INSERT INTO organisation_jurisdictions (org_id, slug) SELECT ?, slug FROM jurisdictions").run(EVAL_ORG_ID);
  const allJurisdictions = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions ORDER BY slug").all().map((r) => r.slug);
  const corpusPaths = (await loadSampleCorpus()).passages.map((p) => p.citationPath);
  return {
    deps,
    allJurisdictions,
    corpusPaths,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Scores {
  ndcg: number;
  recall: number;
}

export function scoreRanking(ranked: readonly string[], question: Question, corpusPaths: readonly string[]): Scores {
  const gains = ranked.slice(0, K).map((p) => gradeOf(p, question.relevant));
  const dcg = gains.reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const corpusGrades = corpusPaths.map((p) => gradeOf(p, question.relevant)).sort((a, b) => b - a);
  const idcg = corpusGrades.slice(0, K).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const answering = corpusGrades.filter((g) => g >= 2).length;
  const found = gains.filter((g) => g >= 2).length;
  return { ndcg: idcg === 0 ? 0 : dcg / idcg, recall: answering === 0 ? 0 : found / Math.min(K, answering) };
}

export async function evaluate(
  index: EvalIndex,
  method: SearchMethod,
  questions: readonly Question[] = QUESTIONS,
  tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
): Promise<Scores & { perQuestion: Map<string, Scores> }> {
  const perQuestion = new Map<string, Scores>();
  for (const q of questions) {
    const results = await searchKnowledgeBase(
      index.deps,
      { orgId: EVAL_ORG_ID, query: q.query, jurisdictions: q.jurisdictions ?? index.allJurisdictions, topK: K },
      tuning,
      method,
    );
    perQuestion.set(q.id, scoreRanking(results.map((r) => r.citationPath ?? ""), q, index.corpusPaths));
  }
  const values = [...perQuestion.values()];
  const mean = (f: (s: Scores) => number) => values.reduce((sum, s) => sum + f(s), 0) / Math.max(1, values.length);
  return { ndcg: mean((s) => s.ndcg), recall: mean((s) => s.recall), perQuestion };
}

/** Judgments that match no passage are typos in questions.json; fail loudly instead of scoring 0. */
export function unmatchedJudgments(index: EvalIndex): string[] {
  return QUESTIONS.flatMap((q) =>
    q.relevant.filter((j) => !index.corpusPaths.some((p) => gradeOf(p, [{ ...j, grade: 1 }]) > 0)).map((j) => `${q.id}: ${j.key ?? j.path}`),
  );
}

if (import.meta.main) {
  const index = await buildEvalIndex();
  try {
    const unmatched = unmatchedJudgments(index);
    if (unmatched.length > 0) console.log(`judgments matching no passage: ${unmatched.join("; ")}`);
    if (process.argv.includes("--tune")) {
      const dev = QUESTIONS.filter((q) => q.split === "dev");
      for (const bm25 of [0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9]) {
        for (const [citation, heading] of [[1, 1], [2, 2], [4, 4]] as const) {
          for (const mentionBoost of [0.1, 0.3, 0.5]) {
            const tuning = { ...DEFAULT_SEARCH_TUNING, mentionBoost, weights: { bm25, vector: 1 - bm25 }, fts: { citation, heading, body: 1 } };
            const s = await evaluate(index, "hybrid", dev, tuning);
            console.log(`bm25 ${bm25.toFixed(2)} fts ${citation}/${heading}/1 mention ${mentionBoost}  nDCG@10 ${s.ndcg.toFixed(3)}  recall@10 ${s.recall.toFixed(3)}`);
          }
        }
      }
    } else {
      const verbose = process.argv.includes("--verbose");
      for (const split of ["all", "dev", "held-out"] as const) {
        const questions = split === "all" ? QUESTIONS : QUESTIONS.filter((q) => q.split === split);
        const row: string[] = [];
        for (const method of ["bm25", "vector", "hybrid"] as const) {
          const s = await evaluate(index, method, questions);
          row.push(`${method} nDCG@10 ${s.ndcg.toFixed(3)} recall@10 ${s.recall.toFixed(3)}`);
          if (verbose && split === "all") for (const [id, q] of s.perQuestion) console.log(`  ${method} ${id} ndcg ${q.ndcg.toFixed(2)} recall ${q.recall.toFixed(2)}`);
        }
        console.log(`${split.padEnd(8)} (${questions.length} questions)  ${row.join(" | ")}`);
      }
    }
  } finally {
    index.close();
  }
}
