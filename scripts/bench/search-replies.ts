/**
 * Dumps the replies to the judged questions, one JSON line each, so a change meant to make
 * searches cheaper can be checked to change no reply (compare two dumps byte for byte), or,
 * for a change meant to alter results, how far (search-replies-diff.ts):
 *
 *   REGKB_SEARCH_WORKERS=0 bun scripts/bench/search-replies.ts --data DIR [--in-memory] > replies.jsonl
 *
 * Each question at topK 10 with every jurisdiction, with 8 and with its own (or "eu"); run
 * on the calling thread (no search workers), so the dump is the same from run to run. The
 * vector half is vec0's scan, or with --in-memory a search worker's in-memory copy (loaded
 * first, as a worker has it).
 */
import { closeBenchCorpus, eightJurisdictions, openBenchCorpus } from "./corpus";
import { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { VectorMemory } from "../../src/search/vector-memory";
import questionsFile from "../../test/search-quality/questions.json";

const corpus = await openBenchCorpus("replies");
const { db, embedder } = corpus.deps.searchIndex;
let deps = corpus.deps;
if (process.argv.includes("--in-memory")) {
  const memory = new VectorMemory(db);
  await memory.load();
  deps = { ...deps, searchIndex: new SearchIndex(db, embedder, memory) };
}
const scopes = (q: { jurisdictions?: string[] }) =>
  [
    ["all", corpus.org.jurisdictions],
    ["eight", eightJurisdictions(corpus)],
    ["own", q.jurisdictions ?? ["eu"]],
  ] as const;
for (const q of questionsFile.questions as { id: string; query: string; jurisdictions?: string[] }[]) {
  for (const [label, jurisdictions] of scopes(q)) {
    const results = await searchKnowledgeBase(deps, { orgId: corpus.org.id, query: q.query, jurisdictions: [...jurisdictions], topK: 10 });
    console.log(JSON.stringify({ id: q.id, scope: label, results }));
  }
}
await closeBenchCorpus(corpus);
