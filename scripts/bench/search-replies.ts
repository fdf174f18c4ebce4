/**
 * Dumps the replies to the judged questions, one JSON line each, so a change meant to make
 * searches cheaper can be checked to change no reply (compare two dumps byte for byte):
 *
 *   REGKB_SEARCH_WORKERS=0 bun scripts/bench/search-replies.ts --data DIR > replies.jsonl
 *
 * Each question at topK 10 with every jurisdiction, with 8 and with its own (or "eu"); run
 * on the calling thread (no search workers), so the vector half is vec0's and the dump is
 * the same from run to run.
 */
import { closeBenchCorpus, eightJurisdictions, openBenchCorpus } from "./corpus";
import { searchKnowledgeBase } from "../../src/search/service";
import questionsFile from "../../test/search-quality/questions.json";

const corpus = await openBenchCorpus("replies");
const scopes = (q: { jurisdictions?: string[] }) =>
  [
    ["all", corpus.org.jurisdictions],
    ["eight", eightJurisdictions(corpus)],
    ["own", q.jurisdictions ?? ["eu"]],
  ] as const;
for (const q of questionsFile.questions as { id: string; query: string; jurisdictions?: string[] }[]) {
  for (const [label, jurisdictions] of scopes(q)) {
    const results = await searchKnowledgeBase(corpus.deps, { orgId: corpus.org.id, query: q.query, jurisdictions: [...jurisdictions], topK: 10 });
    console.log(JSON.stringify({ id: q.id, scope: label, results }));
  }
}
await closeBenchCorpus(corpus);
