import { afterAll, beforeAll, expect, test } from "bun:test";
import { analyseQuery } from "../../src/search/rank/analyse";
import { candidateFeatures, FEATURES, FieldCache, type CandidateText } from "../../src/search/rank/features";
import { searchKnowledgeBase } from "../../src/search/service";
import { untitledPath } from "../../src/search/corpus/structure";
import { buildEvalIndex, EVAL_ORG_ID, type EvalIndex } from "../search-quality/evaluate";

// The sample corpus's index: its real term statistics and lexicon.
let index: EvalIndex;
beforeAll(async () => {
  index = await buildEvalIndex();
});
afterAll(() => index.close());

const passage = (body: string): CandidateText => ({ contentHash: `test:${body}`, citation: "", heading: "", title: "", body, jurisdictions: [] });
const FULL = passage("(12) ‘personal data breach’ means a breach of security leading to the accidental or unlawful destruction, loss, alteration, unauthorised disclosure of, or access to, personal data;");
const PART = passage("(1) ‘personal data’ means any information relating to an identified or identifiable natural person;");
const WORD = passage('(a) "Breach of security" or "breach" means unauthorized access of data in electronic form containing personal information.');
const BCR = passage("(20) ‘binding corporate rules’ means personal data protection policies which are adhered to by a controller or processor;");
const HELOC = passage("Home-equity line of credit means an open-end credit plan secured by a dwelling as defined in Regulation Z.");

function feature(name: (typeof FEATURES)[number], text: CandidateText, query: string): number {
  const analysed = analyseQuery(query, index.deps.lexicon);
  const stats = index.deps.searchIndex.termStatistics.current();
  const signals = { cosine: 0, titleCosine: 0, bestCosine: 0, mentioned: [] };
  return candidateFeatures(text, new FieldCache().of(text), analysed, stats, signals)[FEATURES.indexOf(name)]!;
}

test("the definition of the whole term asked for outweighs the definitions of its parts", () => {
  const q = "what does personal data breach mean";
  const [full, part, word] = [FULL, PART, WORD].map((p) => feature("definedShareAsked", p, q));
  expect(full).toBeGreaterThan(Math.max(part!, word!));
  expect(Math.min(part!, word!)).toBeGreaterThan(0);
  // Not asked what it means: the share stays out of the score.
  expect(feature("definedShareAsked", FULL, "notify the authority of a personal data breach")).toBe(0);
});

test("a defined term is found stem by stem: hyphens and plurals do not hide it", () => {
  expect(feature("definesQueryTerm", HELOC, "what is a home equity line of credit")).toBe(1);
  expect(feature("definesQueryTerm", HELOC, "what is a home-equity line of credit for HMDA")).toBe(1);
  expect(feature("definesQueryTerm", HELOC, "what is a line of business")).toBe(0);
  expect(feature("definesQueryTerm", BCR, "is this a binding corporate rule")).toBe(1);
});

test("'difference between' and 'stands for' ask what something is", () => {
  expect(analyseQuery("difference between a controller and a processor", undefined).asksDefinition).toBe(true);
  expect(analyseQuery("what MSA stands for in Regulation C", undefined).asksDefinition).toBe(true);
  expect(analyseQuery("notify the authority within 72 hours", undefined).asksDefinition).toBe(false);
});

test("asked what a personal data breach means, the search shows its definition first", async () => {
  const results = await searchKnowledgeBase(index.deps, { orgId: EVAL_ORG_ID, query: "what does personal data breach mean", jurisdictions: index.allJurisdictions, topK: 10 });
  expect(untitledPath(results[0]!.citationPath ?? "")).toBe("GDPR > Article 4 > (12)");
});

test("a query's term weights are worked out once per index state: new statistics weigh its terms again", () => {
  const analysed = analyseQuery("notify the authority of a personal data breach", index.deps.lexicon);
  const signals = { cosine: 0, titleCosine: 0, bestCosine: 0, mentioned: [] };
  const real = index.deps.searchIndex.termStatistics.current();
  const rarer = { ...real, documentFrequency: () => 1 };
  const bm25 = (stats: typeof real, query = analysed) => candidateFeatures(FULL, new FieldCache().of(FULL), query, stats, signals)[FEATURES.indexOf("bm25")]!;
  const first = bm25(real);
  expect(bm25(rarer)).toBeGreaterThan(first);
  expect(bm25(rarer)).toBe(bm25(rarer, analyseQuery("notify the authority of a personal data breach", index.deps.lexicon)));
  expect(bm25(real)).toBe(first);
});

test("a passage's fields read before the cache starts over score as when read afresh", () => {
  const cache = new FieldCache();
  const query = analyseQuery("notify the supervisory authority of a personal data breach within 72 hours", index.deps.lexicon);
  const stats = index.deps.searchIndex.termStatistics.current();
  const signals = { cosine: 0.5, titleCosine: 0.2, bestCosine: 0.6, mentioned: [] };
  const before = cache.of(FULL);
  // 20,000 other passages make the cache start over, term ids included.
  for (let i = 0; i <= 20_000; i++) cache.of(passage(`filler ${i} zeppelin${i} personal data breach authority`));
  const after = cache.of(WORD);
  expect(after.termIds).not.toBe(before.termIds);
  for (const [text, fields] of [[FULL, before], [WORD, after], [FULL, cache.of(FULL)]] as const) {
    const expected = candidateFeatures(text, new FieldCache().of(text), query, stats, signals);
    expect([...candidateFeatures(text, fields, query, stats, signals)]).toEqual([...expected]);
  }
});
