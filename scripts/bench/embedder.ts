/**
 * Embedder benchmark: speed (single-query latency, batch throughput over real chunks) and
 * quality (paraphrase vs unrelated cosine; dense-only recall@10 / nDCG@10 on judged questions
 * over the sample corpus passages) for the static table and the USE-lite teacher.
 *
 *   bun scripts/bench/embedder.ts [--only static|use-lite] [--table FILE] [--questions FILE]
 *
 * Questions: scripts/bench/embedder-dev-queries.json (the embedder's dev set) and the search
 * set in test/search-quality (graded by its own evaluate.ts), split dev / held-out.
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { StaticEmbedder } from "../../src/search/embedder/static.ts";
import type { Embedder } from "../../src/search/embedder/types.ts";
import { dot } from "../../src/search/embedder/vector.ts";

const repoRoot = resolve(import.meta.dir, "..", "..");
const { values: args } = parseArgs({
  options: {
    only: { type: "string" },
    table: { type: "string" },
    questions: { type: "string", multiple: true },
  },
});

type Passage = { citationPath: string; heading: string; text: string; jurisdictions: string[] };
/** One judged question, graded per passage (0 irrelevant, 1 related, 2 answers). */
type Question = { query: string; jurisdictions?: string[]; gradeOf: (citationPath: string) => number };

const passages = readFileSync(join(repoRoot, "data", "corpus", "passages.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l) as Passage);
const jurisdictionNames = new Map(
  (JSON.parse(readFileSync(join(repoRoot, "data", "corpus", "jurisdictions.json"), "utf8")) as { slug: string; name: string }[]).map((j) => [j.slug, j.name]),
);
// The same text the search service embeds for a passage: jurisdiction names, heading, body.
const passageTexts = passages.map((p) => [p.jurisdictions.map((s) => jurisdictionNames.get(s) ?? s).join(", "), p.heading, p.text].filter((s) => s !== "").join("\n"));

/** The embedder's dev set: relevant = citationPath equals a prefix or continues it with " > " (grade 2). */
function loadDevQuestions(path: string): Question[] {
  const json = JSON.parse(readFileSync(path, "utf8")) as { questions: { query: string; relevant: string[] }[] };
  return json.questions.map((q) => ({
    query: q.query,
    gradeOf: (citationPath) => (q.relevant.some((p) => citationPath === p || citationPath.startsWith(`${p} >`)) ? 2 : 0),
  }));
}

const questionSets: { name: string; questions: Question[] }[] = [];
if (args.questions) {
  for (const f of args.questions) questionSets.push({ name: f, questions: loadDevQuestions(f) });
} else {
  questionSets.push({ name: "embedder dev set", questions: loadDevQuestions(join(repoRoot, "scripts", "bench", "embedder-dev-queries.json")) });
  const searchSetPath = join(repoRoot, "test", "search-quality", "evaluate.ts");
  if (existsSync(searchSetPath)) {
    // The search set's own judgments and grading, so figures compare with its README table.
    const searchSet = (await import(searchSetPath)) as typeof import("../../test/search-quality/evaluate.ts");
    for (const split of ["tuning", "test"] as const) {
      questionSets.push({
        name: `search set ${split}`,
        questions: searchSet.questionsOf(split).map((q) => ({
          query: q.query,
          jurisdictions: q.jurisdictions,
          gradeOf: (citationPath) => Math.max(0, ...searchSet.coveredPassages(citationPath).map((p) => searchSet.gradeOfPassage(p, q.relevant))),
        })),
      });
    }
  }
}

/** Pairs that say the same thing in other words; unrelated pairs are built by shifting. */
const PARAPHRASES: [string, string][] = [
  ["The controller shall notify the supervisory authority of a personal data breach within 72 hours.", "A company has to report a leak of customer data to the regulator within three days."],
  ["The data subject shall have the right to obtain the erasure of personal data concerning him or her.", "People can require an organisation to delete the information it holds about them."],
  ["Notice shall be provided to affected residents in the most expedient time possible and without unreasonable delay.", "Victims must be told about the breach as quickly as possible."],
  ["The notification may be delayed if a law enforcement agency determines that it will impede a criminal investigation.", "Police can ask for the warning to be postponed so the investigation is not compromised."],
  ["Each financial institution shall collect data regarding applications for home purchase loans.", "Mortgage lenders must record information about every house loan application."],
  ["The attorney general may bring an action to enforce this section and recover civil penalties.", "The state's top lawyer can sue violators and make them pay fines."],
  ["Personal information does not include information that is encrypted.", "Data protected by encryption is not covered by the definition."],
  ["Where processing is based on consent, the controller shall be able to demonstrate that the data subject has consented.", "A business relying on permission must be able to prove the person agreed."],
  ["A business shall take reasonable measures to destroy customer records containing personal information.", "Companies must properly shred or erase old client files with private details."],
  ["The processing of personal data of a child below the age of 16 years shall be lawful only with parental authorisation.", "Using the data of kids under sixteen needs a parent's permission."],
  ["The data subject shall have the right to receive the personal data in a structured, commonly used and machine-readable format.", "Individuals can get their data in a standard file format to take it elsewhere."],
  ["Infringements shall be subject to administrative fines up to 20 000 000 EUR or 4 % of total worldwide annual turnover.", "Breaking the rules can cost a company up to four percent of its global revenue."],
];

function percentile(sortedMs: number[], p: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor((p / 100) * sortedMs.length))]!;
}

async function bench(name: string, embedder: Embedder): Promise<void> {
  const log = (line: string) => console.log(`${name.padEnd(22)} ${line}`);
  // Speed: batch throughput over the real passages, then one query at a time.
  const startedMs = performance.now();
  const passageVectors = await embedder.embed(passageTexts);
  const batchMs = performance.now() - startedMs;
  const words = passageTexts.reduce((n, t) => n + t.split(/\s+/).length, 0);
  log(`batch: ${passages.length} chunks (avg ${Math.round(words / passages.length)} words) in ${batchMs.toFixed(0)} ms = ${(passages.length / (batchMs / 1000)).toFixed(0)} chunks/s, ${(batchMs / passages.length).toFixed(3)} ms/chunk`);
  const queries = questionSets.flatMap((s) => s.questions.map((q) => q.query));
  const latenciesMs: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    await embedder.embed([q]);
    latenciesMs.push(performance.now() - t);
  }
  latenciesMs.sort((a, b) => a - b);
  log(`query: ${queries.length} single-query calls, p50 ${percentile(latenciesMs, 50).toFixed(3)} ms, p95 ${percentile(latenciesMs, 95).toFixed(3)} ms`);

  // Quality: paraphrase vs unrelated cosine.
  const left = await embedder.embed(PARAPHRASES.map((p) => p[0]));
  const right = await embedder.embed(PARAPHRASES.map((p) => p[1]));
  const same = left.map((v, i) => dot(v, right[i]!));
  const other = left.map((v, i) => dot(v, right[(i + 1) % right.length]!));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const ranked = left.filter((v, i) => right.every((r, j) => j === i || dot(v, right[i]!) > dot(v, r))).length;
  log(`pairs: paraphrase cos ${mean(same).toFixed(3)} vs unrelated ${mean(other).toFixed(3)} (gap ${(mean(same) - mean(other)).toFixed(3)}); paraphrase ranked first ${ranked}/${PARAPHRASES.length}`);

  // Retrieval: dense-only, exact cosine over the passages of the question's jurisdictions.
  // nDCG@10 with graded gains 2^g − 1; recall@10 counts answering (grade 2) passages.
  for (const set of questionSets) {
    const queryVectors = await embedder.embed(set.questions.map((q) => q.query));
    let recallSum = 0;
    let ndcgSum = 0;
    set.questions.forEach((q, qi) => {
      const grades = passages.map((p) => q.gradeOf(p.citationPath));
      const candidates = passages
        .map((p, i) => ({ i, p }))
        .filter(({ p }) => !q.jurisdictions || p.jurisdictions.some((j) => q.jurisdictions!.includes(j)))
        .map(({ i }) => ({ i, score: dot(queryVectors[qi]!, passageVectors[i]!) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, 10);
      const gain = (g: number) => 2 ** g - 1;
      const dcg = candidates.reduce((sum, c, rank) => sum + gain(grades[c.i]!) / Math.log2(rank + 2), 0);
      const ideal = [...grades].sort((a, b) => b - a).slice(0, 10);
      const idcg = ideal.reduce((sum, g, rank) => sum + gain(g) / Math.log2(rank + 2), 0);
      if (idcg === 0) throw new Error(`${set.name}: no passage is relevant to "${q.query}"`);
      ndcgSum += dcg / idcg;
      const answering = grades.filter((g) => g >= 2).length;
      if (answering > 0) recallSum += candidates.filter((c) => grades[c.i]! >= 2).length / Math.min(10, answering);
    });
    const n = set.questions.length;
    log(`${set.name}: ${n} questions, dense-only nDCG@10 ${(ndcgSum / n).toFixed(3)}, recall@10 ${(recallSum / n).toFixed(3)}`);
  }
}

if (args.only !== "use-lite") {
  const t = performance.now();
  const embedder = await StaticEmbedder.load(args.table);
  console.log(`static table loaded in ${(performance.now() - t).toFixed(0)} ms`);
  await bench(embedder.id, embedder);
}
if (args.only !== "static") {
  const { UseLiteEmbedder } = await import("../../src/search/embedder/use-lite.ts");
  const t = performance.now();
  const embedder = await UseLiteEmbedder.load();
  console.log(`USE-lite loaded in ${(performance.now() - t).toFixed(0)} ms`);
  await bench(embedder.id, embedder);
}
