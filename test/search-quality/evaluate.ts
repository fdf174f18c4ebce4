/**
 * Search quality on the judged questions (questions.json) over the sample corpus:
 * nDCG@10, recall@10 and MRR@10 per method (BM25 only, vector only, hybrid), split and category.
 *
 *   bun test/search-quality/evaluate.ts [--split test|tuning|all] [--markdown] [--verbose]
 *
 * Scored on what a match shows: its citationPath names the passages it shows (titles and
 * folded siblings included, see coveredPassages). The matches' passages, in order (a folded
 * match's passages in the order its citation path lists them), are what a reader reads:
 * nDCG@10: graded gains (2 = answers, 1 = related) of the first 10 passages shown, log2
 *   discount, ideal = the corpus's best 10 passages.
 * recall@10: answering (grade 2) passages among the first 10 shown / min(10, answering passages in the corpus).
 * MRR@10: 1 / rank of the first match showing an answering passage (0 if none in the top 10 matches).
 * `strict` scores each match by the best grade it shows instead (a folded match counts once).
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/db/open";
import { citationKeysOfPath } from "../../src/search/citations";
import { PATH_SEPARATOR, untitledPath } from "../../src/search/corpus/structure";
import { importPassages, loadSampleCorpus } from "../../src/search/corpus/import";
import type { CorpusPassage } from "../../src/search/corpus/passages";
import type { Embedder } from "../../src/search/embedder/types";
import { Lexicon } from "../../src/search/lexicon";
import type { SearchDeps } from "../../src/search/search-index";
import type { SearchMethod } from "../../src/search/request";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING, type SearchTuning } from "../../src/search/tuning";
import { readySearchIndex } from "../helpers/search-index";
import questionsFile from "./questions.json";

export interface Judgment {
  /** Exact citationPath of a passage, without titles. */
  passage?: string;
  /** Citation key ("article 33(1)"). */
  key?: string;
  /** Regular expression over the citationPath without titles. */
  path?: string;
  grade: number;
}
export const CATEGORIES = ["statute", "plain", "paraphrase", "citation", "jurisdiction", "exception", "regc", "definition"] as const;
export type Category = (typeof CATEGORIES)[number];
export type Split = "tuning" | "test";
export interface Question {
  id: string;
  split: Split;
  category: Category;
  query: string;
  jurisdictions?: string[];
  relevant: Judgment[];
}
export const QUESTIONS = questionsFile.questions as Question[];
export const EVAL_ORG_ID = "eval-org";
const K = 10;

/** The passages a match shows: its untitled path, or one per sibling label of a folded match ("… > 1–2, 3–5"). */
export function coveredPassages(citationPath: string): string[] {
  const segments = untitledPath(citationPath).split(PATH_SEPARATOR);
  const labels = segments[segments.length - 1]!.split(", ");
  if (segments.length === 1 || labels.length === 1) return [segments.join(PATH_SEPARATOR)];
  const parent = segments.slice(0, -1).join(PATH_SEPARATOR);
  return labels.map((l) => `${parent}${PATH_SEPARATOR}${l}`);
}

/** Grade of one passage (an untitled citation path) under a question's judgments. */
export function gradeOfPassage(untitled: string, judgments: readonly Judgment[]): number {
  const keys = new Set(citationKeysOfPath(untitled));
  let grade = 0;
  for (const j of judgments) {
    const hit =
      (j.passage !== undefined && j.passage === untitled) ||
      (j.key !== undefined && keys.has(j.key)) ||
      (j.path !== undefined && new RegExp(j.path).test(untitled));
    if (hit) grade = Math.max(grade, j.grade);
  }
  return grade;
}

export interface EvalIndex {
  deps: SearchDeps;
  allJurisdictions: string[];
  /** Every passage's untitled citation path, for ideal rankings and to check each judgment matches something. */
  corpusPaths: string[];
  close(): void;
}

export interface EvalIndexOptions {
  embedder?: Embedder;
  /** Passages to index instead of the shipped sample corpus (e.g. an earlier version of it). */
  passages?: CorpusPassage[];
}

/** Builds the index once in a temporary folder: sample corpus, static embedder, one org with everything enabled. */
export async function buildEvalIndex(options: EvalIndexOptions = {}): Promise<EvalIndex> {
  const dir = join(tmpdir(), `regkb-eval-${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const db = await openDatabase(dir);
  const deps = { searchIndex: await readySearchIndex(db, options.embedder), lexicon: await Lexicon.load() };
  const sample = await loadSampleCorpus();
  const corpus = { jurisdictions: sample.jurisdictions, passages: options.passages ?? sample.passages };
  await importPassages(deps, corpus);
  db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, 'Evaluation', 0)").run(EVAL_ORG_ID);
  db.query("INSERT INTO organisation_jurisdictions (org_id, slug) SELECT ?, slug FROM jurisdictions").run(EVAL_ORG_ID);
  const allJurisdictions = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions ORDER BY slug").all().map((r) => r.slug);
  const corpusPaths = corpus.passages.map((p) => untitledPath(p.citationPath));
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
  mrr: number;
}

const dcg = (gains: readonly number[]) => gains.reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);

export function scoreRanking(citationPaths: readonly string[], question: Question, corpusPaths: readonly string[], strict = false): Scores {
  const shown = citationPaths.slice(0, K).map(coveredPassages);
  const grade = (p: string) => gradeOfPassage(p, question.relevant);
  const read = strict ? shown.map((passages) => passages[0]!) : shown.flat().slice(0, K);
  const gains = strict ? shown.map((passages) => Math.max(0, ...passages.map(grade))) : read.map(grade);
  const corpusGrades = corpusPaths.map(grade).sort((a, b) => b - a);
  const ideal = dcg(corpusGrades.slice(0, K));
  const answering = corpusGrades.filter((g) => g >= 2).length;
  const found = new Set((strict ? shown.flat() : read).filter((p) => grade(p) >= 2)).size;
  const firstAnswer = shown.findIndex((passages) => passages.some((p) => grade(p) >= 2));
  return {
    ndcg: ideal === 0 ? 0 : dcg(gains) / ideal,
    recall: answering === 0 ? 0 : Math.min(1, found / Math.min(K, answering)),
    mrr: firstAnswer < 0 ? 0 : 1 / (firstAnswer + 1),
  };
}

export interface Evaluation extends Scores {
  perQuestion: Map<string, Scores & { top: string[] }>;
}

export function meanScores(values: readonly Scores[]): Scores {
  const mean = (f: (s: Scores) => number) => values.reduce((sum, s) => sum + f(s), 0) / Math.max(1, values.length);
  return { ndcg: mean((s) => s.ndcg), recall: mean((s) => s.recall), mrr: mean((s) => s.mrr) };
}

/** A question with no `jurisdictions` is asked as a customer would: no filter, every enabled jurisdiction. */
export async function evaluate(
  index: EvalIndex,
  method: SearchMethod,
  questions: readonly Question[] = QUESTIONS,
  tuning: SearchTuning = DEFAULT_SEARCH_TUNING,
): Promise<Evaluation> {
  const perQuestion = new Map<string, Scores & { top: string[] }>();
  for (const q of questions) {
    const results = await searchKnowledgeBase(
      index.deps,
      { orgId: EVAL_ORG_ID, query: q.query, jurisdictions: q.jurisdictions ?? index.allJurisdictions, topK: K },
      tuning,
      method,
    );
    const paths = results.map((r) => r.citationPath ?? "");
    perQuestion.set(q.id, { ...scoreRanking(paths, q, index.corpusPaths), top: paths });
  }
  return { ...meanScores([...perQuestion.values()]), perQuestion };
}

/** Judgments that match no passage are typos in questions.json; fail loudly instead of scoring 0. */
export function unmatchedJudgments(index: EvalIndex): string[] {
  return QUESTIONS.flatMap((q) =>
    q.relevant.filter((j) => !index.corpusPaths.some((p) => gradeOfPassage(p, [{ ...j, grade: 1 }]) > 0)).map((j) => `${q.id}: ${j.passage ?? j.key ?? j.path}`),
  );
}

export function questionsOf(split: Split | "all", category?: Category): Question[] {
  return QUESTIONS.filter((q) => (split === "all" || q.split === split) && (category === undefined || q.category === category));
}

const fmt = (s: Scores) => `${s.ndcg.toFixed(3)} / ${s.recall.toFixed(3)} / ${s.mrr.toFixed(3)}`;

/** Rows of "category (n) | bm25 | vector | hybrid", nDCG@10 / recall@10 / MRR@10 each. */
export async function report(index: EvalIndex, split: Split | "all", tuning: SearchTuning = DEFAULT_SEARCH_TUNING, methods: readonly SearchMethod[] = ["bm25", "vector", "hybrid"]): Promise<string[][]> {
  const rows: string[][] = [];
  const evaluations = new Map<SearchMethod, Evaluation>();
  for (const method of methods) evaluations.set(method, await evaluate(index, method, questionsOf(split), tuning));
  for (const category of [undefined, ...CATEGORIES]) {
    const ids = questionsOf(split, category).map((q) => q.id);
    if (ids.length === 0) continue;
    rows.push([`${category ?? "all"} (${ids.length})`, ...methods.map((m) => fmt(meanScores(ids.map((id) => evaluations.get(m)!.perQuestion.get(id)!))))]);
  }
  return rows;
}

if (import.meta.main) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i < 0 ? undefined : process.argv[i + 1];
  };
  const split = (arg("--split") ?? "all") as Split | "all";
  const index = await buildEvalIndex();
  try {
    const unmatched = unmatchedJudgments(index);
    if (unmatched.length > 0) console.log(`judgments matching no passage: ${unmatched.join("; ")}`);
    const rows = await report(index, split);
    console.log(`split: ${split}; each cell nDCG@10 / recall@10 / MRR@10`);
    if (process.argv.includes("--markdown")) {
      console.log("| category | BM25 only | vector only | hybrid |\n|---|---|---|---|");
      for (const r of rows) console.log(`| ${r.join(" | ")} |`);
    } else {
      for (const r of rows) console.log(`${r[0]!.padEnd(18)} bm25 ${r[1]}   vector ${r[2]}   hybrid ${r[3]}`);
    }
    if (process.argv.includes("--verbose")) {
      const e = await evaluate(index, "hybrid", questionsOf(split));
      for (const q of questionsOf(split)) {
        const s = e.perQuestion.get(q.id)!;
        console.log(`${q.id} [${q.category}] ndcg ${s.ndcg.toFixed(2)} rr ${s.mrr.toFixed(2)}  ${q.query}\n    ${s.top.slice(0, 3).join("\n    ")}`);
      }
    }
  } finally {
    index.close();
  }
}
