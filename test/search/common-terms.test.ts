import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { upsertJurisdiction } from "../../src/auth/store";
import type { SearchDeps } from "../../src/search/search-index";
import { indexDocument } from "../../src/search/indexing";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// Past 5,000 passages, terms in more than a hundredth of them are "common". This index has
// 5,200: "alpha" and "beta" are each in 3,000, "gamma" in 4,000, "delta" in 200, "zeta" in
// 70, "epsilon" in 3, and no passage has all of alpha, beta and gamma.
let dir: string;
let deps: SearchDeps & { db: Database };

const bm25 = (query: string) =>
  searchKnowledgeBase(deps, { orgId: "org-a", query, jurisdictions: ["eu"], topK: 20 }, DEFAULT_SEARCH_TUNING, "bm25");

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  deps = { db, searchIndex: await readySearchIndex(db) };
  upsertJurisdiction(deps.db, { slug: "eu", name: "European Union", description: "EU" });
  deps.db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
  const words = (i: number) => (i < 2000 ? "alpha gamma" : i < 4000 ? "beta gamma" : i < 5000 ? "alpha beta" : i < 5003 ? "delta epsilon" : i < 5073 ? "delta zeta" : "delta");
  await indexDocument(deps, {
    documentId: "corpus:synthetic",
    ownerOrgId: null,
    jurisdictions: ["eu"],
    passages: Array.from({ length: 5200 }, (_, i) => ({ source: "Synthetic Act", citationPath: `Synthetic Act > ${i}`, text: `Record ${i}: ${words(i)} ledger entry.`, position: i })),
  });
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a rare term decides which passages BM25 reads; common ones are left out", async () => {
  const results = await bm25("delta alpha");
  expect(results).toHaveLength(20);
  expect(results.every((r) => r.content.includes("delta"))).toBe(true);
});

test("a rare term that few passages have is not padded out with common ones", async () => {
  const results = await bm25("epsilon alpha");
  expect(results.map((r) => r.content)).toEqual(expect.arrayContaining([expect.stringContaining("delta epsilon")]));
  expect(results).toHaveLength(3);
});

test("a query of common terms only needs passages with all of them", async () => {
  const results = await bm25("alpha beta");
  expect(results).toHaveLength(20);
  expect(results.every((r) => r.content.includes("alpha beta"))).toBe(true);
});

test("when no passage has every common term, any of them will do", async () => {
  const results = await bm25("alpha beta gamma");
  expect(results).toHaveLength(20);
  expect(results.every((r) => /alpha|beta|gamma/.test(r.content))).toBe(true);
});

test("a term in more than a hundredth of the passages brings no candidates, yet the ranker reads its exact count", () => {
  const stats = deps.searchIndex.termStatistics.current();
  expect(stats.isCommon("zeta")).toBe(true);
  expect(stats.documentFrequency("zeta")).toBe(70);
  expect(stats.isCommon("epsilon")).toBe(false);
});
