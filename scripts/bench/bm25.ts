/**
 * BM25 alone: the query's words as stage one scores them (candidates.ts bm25Search), over the
 * judged questions, with the in-memory term index (bm25/term-index.ts) and with FTS5 alone.
 * Prints figures; asserts nothing.
 *
 *   bun scripts/bench/bm25.ts --data DIR [--rounds 3]
 *
 * DIR: a corpus search.ts --data built (its size is the corpus's). Each question's time is
 * the best of --rounds, one search at a time, all 52 jurisdictions and 8; also the term
 * index's size and load time, whether both ways found the same hits, and the slowest
 * questions each way.
 */
import { bm25Search } from "../../src/search/candidates";
import { commonTermsConjunction } from "../../src/search/query-text";
import { resolveSearchScope } from "../../src/search/scopes";
import { SearchIndex } from "../../src/search/search-index";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { closeBenchCorpus, eightJurisdictions, flag, fmt, openBenchCorpus, p50p95, QUERIES } from "./corpus";

const ROUNDS = Number(flag("rounds", "3"));

const corpus = await openBenchCorpus("corpus");
const { db } = corpus.deps.searchIndex;
const withTerms = corpus.deps.searchIndex;
// FTS5 alone: a second index over the same connection whose term index never answers.
const fts5Only = new SearchIndex(db, withTerms.embedder);
fts5Only.bm25Terms.searchAllOf = () => undefined;
const { isCommon } = withTerms.termStatistics.current();
const unique = [...new Set(QUERIES)];
const common = unique.filter((q) => commonTermsConjunction(q, isCommon) !== undefined);
console.log(`${corpus.size} passages; ${unique.length} questions, ${common.length} of them of common terms alone`);

const loadStarted = performance.now();
for (const [, jurisdictions] of [["all", corpus.org.jurisdictions], ["8", eightJurisdictions(corpus)]] as const) {
  const scope = resolveSearchScope(db, corpus.org.id, jurisdictions);
  for (const query of common) bm25Search(withTerms, query, [scope], DEFAULT_SEARCH_TUNING.fts, DEFAULT_SEARCH_TUNING.candidatesPerMethod, 0);
}
await withTerms.bm25Terms.load();
const { postings, bytes } = withTerms.bm25Terms.size;
console.log(`term index: ${postings} postings, ${(bytes / 1e6).toFixed(1)} MB, loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

for (const [label, jurisdictions] of [["all 52 jurisdictions", corpus.org.jurisdictions], ["8 jurisdictions", eightJurisdictions(corpus)]] as const) {
  const scope = resolveSearchScope(db, corpus.org.id, jurisdictions);
  const best = (index: SearchIndex, query: string) => {
    let ms = Infinity;
    for (let r = 0; r < ROUNDS; r++) {
      const started = performance.now();
      bm25Search(index, query, [scope], DEFAULT_SEARCH_TUNING.fts, DEFAULT_SEARCH_TUNING.candidatesPerMethod, 0);
      ms = Math.min(ms, performance.now() - started);
    }
    return ms;
  };
  const hitsOf = (index: SearchIndex, query: string) => bm25Search(index, query, [scope], DEFAULT_SEARCH_TUNING.fts, DEFAULT_SEARCH_TUNING.candidatesPerMethod, 0);
  const same = unique.filter((q) => Bun.deepEquals(hitsOf(fts5Only, q), hitsOf(withTerms, q))).length;
  const rows = unique.map((query) => ({ query, fts5: best(fts5Only, query), terms: best(withTerms, query) }));
  console.log(`${label}: the same hits, order and scores both ways for ${same} of ${unique.length} questions`);
  const sum = (f: (r: (typeof rows)[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
  console.log(`${label}: BM25 p50 / p95 FTS5 alone ${p50p95(rows.map((r) => r.fts5))} ms, with the term index ${p50p95(rows.map((r) => r.terms))} ms; total ${fmt(sum((r) => r.fts5))} → ${fmt(sum((r) => r.terms))} ms`);
  console.log("  slowest in FTS5 alone:");
  for (const r of rows.sort((a, b) => b.fts5 - a.fts5).slice(0, 8)) console.log(`    ${fmt(r.fts5)} → ${fmt(r.terms)} ms  ${r.query}`);
  console.log("  slowest with the term index:");
  for (const r of rows.sort((a, b) => b.terms - a.terms).slice(0, 5)) console.log(`    ${fmt(r.fts5)} → ${fmt(r.terms)} ms  ${r.query}`);
}
await closeBenchCorpus(corpus);
