import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { Bm25TermIndex } from "../../src/search/bm25/term-index";
import { loadSampleCorpus, importSampleCorpus } from "../../src/search/corpus/import";
import { ftsSearch, type FtsWeights } from "../../src/search/fts-store";
import { deleteDocumentChunks, indexDocument } from "../../src/search/indexing";
import { seededRandom } from "../../src/search/ivf";
import { Lexicon } from "../../src/search/lexicon";
import { commonTermsConjunction, queryTerms } from "../../src/search/query-text";
import { analyseQuery } from "../../src/search/rank/analyse";
import type { SearchScope } from "../../src/search/scopes";
import { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import questionsFile from "../search-quality/questions.json";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// The sample corpus plus two organisations' copies of most of it (~3,000 passages, shared
// and organisation scopes, exact duplicates for ties): BM25 from the in-memory term index
// must be exactly FTS5's (the same passages, order and scores), before and after writes.
let dir: string;
let deps: { db: Database; searchIndex: SearchIndex };
let all: string[];
const scopes: SearchScope[] = [];
const WEIGHTS: FtsWeights[] = [DEFAULT_SEARCH_TUNING.fts, { citation: 2.5, heading: 1.3, body: 0.7 }];

const allOf = (phrases: readonly string[]) => phrases.map((p) => `"${p}"`).join(" AND ");

/** The term index's answer once it holds what the search needs (undefined: a form it leaves to FTS5). */
async function fast(phrases: readonly string[], scope: SearchScope, weights: FtsWeights, limit: number) {
  const terms = deps.searchIndex.bm25Terms;
  const first = terms.searchAllOf(phrases, scope, weights, limit);
  if (first !== undefined) return first;
  await terms.load();
  return terms.searchAllOf(phrases, scope, weights, limit);
}

/** Whether the term index answers this conjunction at all (every phrase one token). */
async function covered(phrases: readonly string[]): Promise<boolean> {
  return (await fast(phrases, scopes[0]!, WEIGHTS[0]!, 10)) !== undefined;
}

let variant = 0;

/** Compares every scope, with every weighting and limit or (`every` false) one of them in turn; returns the hits compared. */
async function expectSameAsFts5(phrases: readonly string[], every = true): Promise<number> {
  let hits = 0;
  for (const scope of scopes) {
    variant++;
    for (const weights of every ? WEIGHTS : [WEIGHTS[variant % 2]!]) {
      for (const limit of every ? [100, 7] : [[100, 7][(variant >> 1) % 2]!]) {
        const expected = ftsSearch(deps.db, allOf(phrases), scope, weights, limit);
        const got = await fast(phrases, scope, weights, limit);
        if (got === undefined) throw new Error(`not answered: ${phrases.join(" AND ")}`);
        expect({ phrases, got }).toEqual({ phrases, got: expected });
        hits += got.length;
      }
    }
  }
  return hits;
}

async function orgCopies(orgId: string, passages: Awaited<ReturnType<typeof loadSampleCorpus>>["passages"], jurisdictions: string[][]): Promise<void> {
  for (let i = 0; i < jurisdictions.length; i++) {
    const chosen = passages.filter((_, p) => p % jurisdictions.length === i);
    await indexDocument(deps, {
      documentId: `${orgId}-${i}`,
      ownerOrgId: orgId,
      jurisdictions: jurisdictions[i]!,
      passages: chosen.map((p, position) => ({ source: p.source, citationPath: p.citationPath, heading: p.heading, text: p.text, position })),
    });
  }
}

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  deps = { db, searchIndex: await readySearchIndex(db) };
  await importSampleCorpus(deps);
  for (const org of ["org-a", "org-b", "org-c"]) db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, ?, 0)").run(org, org);
  const { passages } = await loadSampleCorpus();
  await orgCopies("org-a", passages, [[], ["eu"], ["us-ny", "us-ca"]]);
  await orgCopies("org-b", passages, [["eu"], []]);
  await orgCopies("org-c", passages.slice(0, 600), [["eu", "us-ny"]]);
  // Identical rows score identically: FTS5 keeps them by ascending rowid.
  const twin = { source: "Twin", citationPath: "Twin > 1", heading: "Breach notice", text: "A personal data breach notice to the authority." };
  await indexDocument(deps, { documentId: "twins", ownerOrgId: null, jurisdictions: ["eu"], passages: [0, 1, 2].map((position) => ({ ...twin, position })) });
  all = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  scopes.push(
    { allShared: true, jurisdictions: all, orgScopes: [] },
    { allShared: true, jurisdictions: all, orgScopes: ["org:org-a:*", "org:org-a:eu"] },
    { allShared: false, jurisdictions: all.slice(0, 8), orgScopes: [] },
    { allShared: false, jurisdictions: ["eu"], orgScopes: ["org:org-b:eu", "org:org-b:*"] },
    { allShared: false, jurisdictions: ["us-ny"], orgScopes: ["org:org-a:us-ny"] },
  );
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the judged questions and their expansions, as conjunctions (phrases included), score exactly as in FTS5", async () => {
  expect(deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n).toBeGreaterThan(3_000);
  const lexicon = await Lexicon.load();
  let compared = 0;
  let hits = 0;
  let notCovered = 0;
  for (const { query } of questionsFile.questions) {
    const phrases = commonTermsConjunction(query, () => true)!;
    // Whole questions match few passages; their first words, many (and ties).
    for (const conjunction of [phrases, phrases.slice(0, 2), phrases.slice(0, 1)]) {
      if (conjunction.length === 0) continue;
      if (!(await covered(conjunction))) {
        notCovered++;
        continue;
      }
      hits += await expectSameAsFts5(conjunction, false);
      compared++;
    }
    for (const expansion of analyseQuery(query, lexicon).expansions.slice(0, 2)) {
      const conjunction = [phrases[0]!, ...queryTerms(expansion.text)];
      if (phrases.length === 0 || !(await covered(conjunction))) continue;
      hits += await expectSameAsFts5(conjunction, false);
      compared++;
    }
  }
  expect(compared).toBeGreaterThan(500);
  expect(hits).toBeGreaterThan(50_000);
  expect(notCovered).toBe(0);
}, 120_000);

test("words FTS5 splits into phrases (\"1003.4\", \"u.s\", \"899-aa\") and phrases of words score exactly as in FTS5", async () => {
  let hits = 0;
  for (const phrases of [["1003.4"], ["1003.4", "data"], ["u.s", "breach"], ["899-aa"], ["personal data", "breach"], ["supervisory authority"], ["data data"], ["controller s", "processor"]]) {
    hits += await expectSameAsFts5(phrases);
  }
  expect(hits).toBeGreaterThan(1_000);
});

test("generated conjunctions of frequent and rare words score exactly as in FTS5", async () => {
  const { passages } = await loadSampleCorpus();
  const words = [...new Set(passages.flatMap((p) => queryTerms(p.text)))].filter((w) => /^[a-z]+$/.test(w));
  const next = seededRandom(7);
  let hits = 0;
  for (let i = 0; i < 60; i++) {
    const size = 1 + Math.floor(next() * 3);
    // Skewed towards the corpus's first, more frequent words, so most conjunctions match something.
    const phrases = Array.from({ length: size }, () => words[Math.floor(next() ** 3 * words.length)]!);
    hits += await expectSameAsFts5([...new Set(phrases)]);
  }
  // Phrases of two adjacent words of a passage, with a frequent word.
  for (let i = 0; i < 30; i++) {
    const tokens = queryTerms(passages[Math.floor(next() * passages.length)]!.text);
    const at = Math.floor(next() * (tokens.length - 1));
    hits += await expectSameAsFts5([`${tokens[at]} ${tokens[at + 1]}`, words[Math.floor(next() ** 3 * words.length)]!]);
  }
  expect(hits).toBeGreaterThan(10_000);
}, 60_000);

test("equal scores keep FTS5's order (ascending passage id)", async () => {
  const hits = await fast(["authority", "notice"], { allShared: false, jurisdictions: ["eu"], orgScopes: [] }, WEIGHTS[0]!, 100);
  const twins = hits!.filter((h, i) => hits!.some((o, j) => j !== i && o.bm25 === h.bm25));
  expect(twins.length).toBeGreaterThanOrEqual(3);
  await expectSameAsFts5(["authority", "notice"]);
});

test("after inserts and deletes, FTS5 answers until the copy is reloaded, then the copy is exact again", async () => {
  const phrases = ["personal", "data", "breach"];
  await expectSameAsFts5(phrases);
  const terms = deps.searchIndex.bm25Terms;
  await indexDocument(deps, {
    documentId: "late",
    ownerOrgId: null,
    jurisdictions: ["eu"],
    passages: [{ source: "Late Act", citationPath: "Late Act > 1", heading: "Personal data breach", text: "Personal data breach: personal data breach notice.", position: 0 }],
  });
  deleteDocumentChunks(deps, "org-a-1");
  // Stale: left to FTS5, which sees the new passage at once.
  expect(terms.searchAllOf(phrases, scopes[0]!, WEIGHTS[0]!, 100)).toBeUndefined();
  expect(ftsSearch(deps.db, allOf(phrases), scopes[0]!, WEIGHTS[0]!, 3).map((h) => h.chunkId)).toContain(
    deps.db.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'late'").get()!.id,
  );
  await terms.load();
  expect(terms.searchAllOf(phrases, scopes[0]!, WEIGHTS[0]!, 100)).toBeDefined();
  await expectSameAsFts5(phrases);
  await expectSameAsFts5(["controller", "processor"]);
});

test("a search worker's query-only connection builds the same copy", async () => {
  const reader = new Database(deps.db.filename, { strict: true });
  reader.exec("PRAGMA query_only = ON");
  try {
    const terms = new Bm25TermIndex(reader);
    const phrases = ["controller", "processing"];
    expect(terms.searchAllOf(phrases, scopes[1]!, WEIGHTS[0]!, 50)).toBeUndefined();
    await terms.load();
    expect(terms.searchAllOf(phrases, scopes[1]!, WEIGHTS[0]!, 50)).toEqual(ftsSearch(deps.db, allOf(phrases), scopes[1]!, WEIGHTS[0]!, 50));
    expect(() => reader.exec("CREATE TEMP TABLE t (x)")).toThrow();
  } finally {
    reader.close();
  }
});

test("a load on a connection closed since ends quietly (a test or a server that stopped)", async () => {
  const reader = new Database(deps.db.filename, { strict: true });
  const terms = new Bm25TermIndex(reader);
  expect(terms.searchAllOf(["ledger", "authority"], scopes[0]!, WEIGHTS[0]!, 10)).toBeUndefined();
  await terms.load();
  reader.close();
  await terms.load();
  await Bun.sleep(10);
});

test("a search of common terms alone is answered from the term index", async () => {
  // Below 5,000 passages no term is common, so every term is made common here.
  const index = new SearchIndex(deps.db, deps.searchIndex.embedder);
  index.termStatistics.current().isCommon = () => true;
  const request = { orgId: "org-a", query: "supervisory authority personal data breach", jurisdictions: all, topK: 10 };
  const byFts5 = await searchKnowledgeBase({ searchIndex: index }, request, DEFAULT_SEARCH_TUNING, "bm25");
  expect(index.bm25Terms.size.postings).toBe(0);
  await index.bm25Terms.load();
  expect(index.bm25Terms.size.postings).toBeGreaterThan(0);
  expect(await searchKnowledgeBase({ searchIndex: index }, request, DEFAULT_SEARCH_TUNING, "bm25")).toEqual(byFts5);
});
