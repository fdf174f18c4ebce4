/**
 * The judged questions' scores on a dump of search-replies.ts (the 100k corpus): a change's
 * effect on quality where passages compete with ~99k recombined copies, which the sample
 * corpus's evaluation (test/search-quality) cannot show. A copy ("… [bench N]") is graded as
 * the passage it was recombined from (60% of its words), so nDCG's ideal ranking is ten of
 * the best graded passages (each has ~120 copies at 100k) and recall counts distinct
 * passages: the figures compare two versions; they are not the evaluation's scores.
 * Each question in its own jurisdictions, or in all of them (as evaluate.ts asks it).
 *
 *   bun scripts/bench/search-replies-score.ts replies.jsonl [more.jsonl …]
 */
import { readFileSync } from "node:fs";
import { untitledPath } from "../../src/search/corpus/structure";
import { loadSampleCorpus } from "../../src/search/corpus/import";
import { CATEGORIES, meanScores, QUESTIONS, scoreRanking, type Scores } from "../../test/search-quality/evaluate";

const corpusPaths = (await loadSampleCorpus()).passages.map((p) => untitledPath(p.citationPath));
const copiedPaths = corpusPaths.flatMap((p) => Array<string>(10).fill(p));
const fmt = (s: Scores) => `${s.ndcg.toFixed(3)} / ${s.recall.toFixed(3)} / ${s.mrr.toFixed(3)}`;

for (const file of process.argv.slice(2)) {
  const replies = new Map<string, string[]>();
  for (const line of readFileSync(file, "utf8").trim().split("\n")) {
    const r = JSON.parse(line) as { id: string; scope: string; results: { citationPath?: string }[] };
    replies.set(`${r.scope} ${r.id}`, r.results.map((m) => (m.citationPath ?? "").replace(/ \[bench \d+\]/g, "")));
  }
  const scores = new Map(
    QUESTIONS.map((q) => {
      const paths = replies.get(`${q.jurisdictions ? "own" : "all"} ${q.id}`);
      if (paths === undefined) throw new Error(`${q.id} is missing from ${file}`);
      return [q.id, { ...scoreRanking(paths, q, corpusPaths), ndcg: scoreRanking(paths, q, copiedPaths).ndcg }] as const;
    }),
  );
  console.log(`${file}: nDCG@10 / recall@10 / MRR@10`);
  for (const split of ["tuning", "test"] as const) {
    for (const category of [undefined, ...CATEGORIES]) {
      const ids = QUESTIONS.filter((q) => q.split === split && (category === undefined || q.category === category)).map((q) => q.id);
      console.log(`  ${split} ${`${category ?? "all"} (${ids.length})`.padEnd(18)} ${fmt(meanScores(ids.map((id) => scores.get(id)!)))}`);
    }
  }
}
