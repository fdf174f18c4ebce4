import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { bm25Within, bm25WithinEach } from "../../src/search/bm25/within";
import { loadSampleCorpus } from "../../src/search/corpus/import";
import { ftsSearch } from "../../src/search/fts-store";
import { deleteDocumentChunks, indexDocument } from "../../src/search/indexing";
import { ftsMatchExpression } from "../../src/search/query-text";
import type { SearchScope } from "../../src/search/scopes";
import type { SearchIndex } from "../../src/search/search-index";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import questionsFile from "../search-quality/questions.json";
import { sampleCorpusIndex } from "../helpers/search-index";

// The sample corpus plus organisations' copies of it: BM25 within a broad scope (filtered
// after ranking) must be exactly the scoped MATCH's (the same passages, order and scores),
// before and after writes, and never hold a passage outside the scope.
let dir: string;
let deps: { db: Database; searchIndex: SearchIndex };
let all: string[];
let broad: SearchScope[];
const WEIGHTS = DEFAULT_SEARCH_TUNING.fts;

async function orgCopy(documentId: string, orgId: string, jurisdictions: string[], every: number): Promise<void> {
  const { passages } = await loadSampleCorpus();
  const chosen = passages.filter((_, i) => i % every === 0);
  await indexDocument(deps, {
    documentId,
    ownerOrgId: orgId,
    jurisdictions,
    passages: chosen.map((p, position) => ({ source: p.source, citationPath: p.citationPath, heading: p.heading, text: p.text, position })),
  });
}

/** Compares every broad scope over every other judged question; returns the hits compared. */
function expectSameAsScopedMatch(limits: readonly number[]): number {
  let hits = 0;
  for (const { query } of questionsFile.questions.filter((_, i) => i % 2 === 0)) {
    const match = ftsMatchExpression(query);
    if (match === undefined) continue;
    for (const scope of broad) {
      for (const limit of limits) {
        const expected = ftsSearch(deps.db, match, scope, WEIGHTS, limit);
        expect({ query, got: bm25Within(deps.searchIndex, match, scope, WEIGHTS, limit) }).toEqual({ query, got: expected });
        hits += expected.length;
      }
    }
  }
  return hits;
}

beforeAll(async () => {
  const index = await sampleCorpusIndex(["org-a", "org-b"]);
  dir = index.dir;
  deps = index;
  const { db } = index;
  await orgCopy("a-any", "org-a", [], 2);
  await orgCopy("a-eu", "org-a", ["eu"], 3);
  await orgCopy("b-eu", "org-b", ["eu"], 2);
  all = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions ORDER BY slug").all().map((r) => r.slug);
  const withoutEu = all.filter((slug) => slug !== "eu");
  broad = [
    { allShared: false, jurisdictions: ["eu", ...withoutEu.slice(0, 20)], orgScopes: [] },
    { allShared: false, jurisdictions: ["eu", "us-ny", "us-ca"], orgScopes: ["org:org-a:*", "org:org-a:eu"] },
    { allShared: false, jurisdictions: withoutEu, orgScopes: ["org:org-a:*"] },
  ];
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a broad scope is filtered after ranking, with exactly the scoped MATCH's hits", () => {
  for (const scope of broad) {
    expect(deps.searchIndex.scopeMembers.of([...scope.jurisdictions, ...scope.orgScopes])!.share).toBeGreaterThanOrEqual(0.2);
  }
  expect(expectSameAsScopedMatch([100, 7])).toBeGreaterThan(10_000);
});

test("a search's filter and the jurisdiction its query names share one ranking, with exactly each scope's own hits", () => {
  const everything = (orgScopes: string[]): SearchScope => ({ allShared: true, jurisdictions: all, orgScopes });
  const narrow: SearchScope = { allShared: false, jurisdictions: ["eu"], orgScopes: ["org:org-a:eu"] };
  // broad[1] reads ["org:org-a:*", "org:org-a:eu"]; broad[2] ["org:org-a:*"]; both are filtered after ranking.
  const pairs: SearchScope[][] = [
    [everything([]), broad[0]!],
    [everything(["org:org-a:*", "org:org-a:eu"]), broad[1]!],
    // The named jurisdictions read an organisation scope the filter does not: they are ranked on their own.
    [everything(["org:org-a:*"]), broad[1]!],
    [broad[2]!, broad[1]!],
    [everything(["org:org-a:*", "org:org-a:eu"]), narrow],
  ];
  let hits = 0;
  for (const { query } of questionsFile.questions.filter((_, i) => i % 2 === 1)) {
    const match = ftsMatchExpression(query);
    if (match === undefined) continue;
    for (const pair of pairs) {
      for (const limit of [100, 7]) {
        const expected = pair.map((scope) => ftsSearch(deps.db, match, scope, WEIGHTS, limit));
        expect({ query, got: bm25WithinEach(deps.searchIndex, match, pair, WEIGHTS, limit) }).toEqual({ query, got: expected });
        hits += expected.flat().length;
      }
    }
  }
  expect(hits).toBeGreaterThan(10_000);
});

test("after writes (a passage id reused in other scopes) the members are read again", async () => {
  const scope = broad[1]!;
  const text = "Zeppelin hangar attestation to the harbour master within 72 hours of a personal data breach.";
  const match = ftsMatchExpression("zeppelin hangar attestation")!;
  const ids = () => bm25Within(deps.searchIndex, match, scope, WEIGHTS, 100).map((h) => h.chunkId);
  const write = (documentId: string, orgId: string | null, jurisdictions: string[]) =>
    indexDocument(deps, { documentId, ownerOrgId: orgId, jurisdictions, passages: [{ source: "own", citationPath: documentId, text, position: 0 }] });
  await write("a-new", "org-a", ["eu"]);
  const newId = deps.db.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'a-new'").get()!.id;
  expect(ids()).toEqual([newId]);
  // The last row's id comes back to the next insert: now a shared passage of a jurisdiction outside the scope.
  deleteDocumentChunks(deps, "a-new");
  expect(ids()).toEqual([]);
  await write("shared-new", null, ["us-tx"]);
  expect(deps.db.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'shared-new'").get()!.id).toBe(newId);
  expect(ids()).toEqual([]);
  // Another organisation's passage never enters, whatever its jurisdiction.
  await write("b-new", "org-b", ["eu"]);
  expect(ids()).toEqual([]);
  expect(expectSameAsScopedMatch([50])).toBeGreaterThan(2_500);
});
