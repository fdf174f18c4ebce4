import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { upsertJurisdiction } from "../../src/auth/store";
import { openDatabase } from "../../src/db/open";
import { indexDocument } from "../../src/search/indexing";
import type { SearchDeps } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { maintain, readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// Maintenance step 6: a large BM25 index is merged into one segment, and again once it has
// grown by a quarter; the merge changes no ranking.
let dir: string;
let deps: SearchDeps & { db: Database };
let indexed = 0;

const WORDS = ["breach", "notice", "controller", "consumer", "resident", "attorney", "encryption", "mortgage"];

async function addPassages(count: number) {
  const from = indexed;
  await indexDocument(deps, {
    documentId: `corpus:synthetic-${from}`,
    ownerOrgId: null,
    jurisdictions: ["eu"],
    passages: Array.from({ length: count }, (_, i) => {
      const n = from + i;
      const text = `Record ${n}: ${WORDS[n % 8]} ${WORDS[(n * 3) % 8]} ${WORDS[(n * 5 + 1) % 8]} ${n % 7 === 0 ? "supervisory authority" : "ledger entry"}.`;
      return { source: "Synthetic Act", citationPath: `Synthetic Act > ${n}`, text, position: i };
    }),
  });
  indexed += count;
}

const ranking = async (query: string) =>
  (await searchKnowledgeBase(deps, { orgId: "org-a", query, jurisdictions: ["eu"], topK: 20 }, DEFAULT_SEARCH_TUNING, "bm25")).map((r) => [r.citationPath, r.score]);

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  deps = { db, searchIndex: await readySearchIndex(db) };
  upsertJurisdiction(deps.db, { slug: "eu", name: "European Union", description: "EU" });
  deps.db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
  // Several documents: FTS5 writes several segments.
  for (let i = 0; i < 4; i++) await addPassages(1_300);
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a large index is merged once; the ranking is the same before and after", async () => {
  const queries = ["supervisory authority breach", "consumer mortgage notice", "encryption resident"];
  const before = await Promise.all(queries.map(ranking));
  expect((await maintain(deps.searchIndex)).mergedBm25Passages).toBe(5_200);
  expect(await Promise.all(queries.map(ranking))).toEqual(before);
  expect(await maintain(deps.searchIndex)).toEqual({});
});

test("it is merged again only once it has grown by a quarter", async () => {
  await addPassages(1_000); // 6,200 < 1.25 × 5,200
  expect((await maintain(deps.searchIndex)).mergedBm25Passages).toBeUndefined();
  await addPassages(400); // 6,600
  expect((await maintain(deps.searchIndex)).mergedBm25Passages).toBe(6_600);
});
