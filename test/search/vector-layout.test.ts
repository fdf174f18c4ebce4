import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { importSampleCorpus } from "../../src/search/corpus/import";
import type { Embedder } from "../../src/search/embedder/types";
import { indexDocumentChunks } from "../../src/search/indexing";
import type { SearchRequest } from "../../src/search/request";
import { SearchIndex, type SearchDeps } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { shortlistDimensionsOf, VECTOR_TABLE } from "../../src/search/vector-store";
import { maintain, readySearchIndex, staticEmbedder } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// An index made by a version whose int8 copies kept every dimension is rebuilt, from the
// stored vectors, to the embedder's shortlist prefix: same answers, no re-embedding.
let dir: string;
let current: SearchDeps;
let earlier: SearchDeps;
let all: string[];

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  const embedder = await staticEmbedder();
  const fullWidth: Embedder = { id: embedder.id, dimensions: embedder.dimensions, shortlistDimensions: embedder.dimensions, embed: (t) => embedder.embed(t) };
  earlier = { searchIndex: await readySearchIndex(db, fullWidth) };
  current = { searchIndex: new SearchIndex(db, embedder) };
  await importSampleCorpus(earlier);
  all = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
  await indexDocumentChunks(earlier, {
    documentId: "doc-a",
    orgId: "org-a",
    jurisdictions: ["us-ny"],
    source: "Harbour policy",
    chunks: [{ text: "Lighthouse keepers log every passing vessel in the harbour ledger.", citationPath: "Harbour policy > 1", position: 0 }],
  });
});

afterAll(() => {
  current.searchIndex.db.close();
  rmSync(dir, { recursive: true, force: true });
});

const requests = (): SearchRequest[] => [
  "notify the supervisory authority of a personal data breach within 72 hours",
  "security freeze on a credit report",
  "which loans must be reported under HMDA",
  "right to erasure of personal data",
].map((query) => ({ orgId: "org-a", query, jurisdictions: all, topK: 10 }));

test("the earlier layout is rebuilt to the shortlist prefix, with the same answers", async () => {
  expect(shortlistDimensionsOf(current.searchIndex.db)).toBe(256);
  // Scores are relative to the weakest candidate of the shortlist, so compare what is found, in order.
  const ranking = (deps: SearchDeps) =>
    Promise.all(requests().map(async (r) => (await searchKnowledgeBase(deps, r, DEFAULT_SEARCH_TUNING, "vector")).map((m) => m.citationPath)));
  const before = await ranking(earlier);
  const rows = current.searchIndex.db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunk_scopes").get()!.n;

  // A search never rebuilds the table itself: it refuses until maintenance has.
  await expect(searchKnowledgeBase(current, requests()[0]!)).rejects.toThrow("its vector table keeps 256 dimensions, the embedder's shortlist 128");
  expect(await maintain(current.searchIndex)).toEqual({ rebuiltVectors: rows });
  expect(shortlistDimensionsOf(current.searchIndex.db)).toBe(128);
  expect(current.searchIndex.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${VECTOR_TABLE}`).get()!.n).toBe(rows);
  expect(await ranking(current)).toEqual(before);
  expect(await maintain(current.searchIndex)).toEqual({});
});

test("an organisation's own passages keep their partition through the rebuild", async () => {
  const results = await searchKnowledgeBase(current, { orgId: "org-a", query: "lighthouse keepers vessel ledger", jurisdictions: ["us-ny"], topK: 3 }, DEFAULT_SEARCH_TUNING, "vector");
  expect(results[0]!.source).toBe("Harbour policy");
  const stranger = await searchKnowledgeBase(current, { orgId: "org-b", query: "lighthouse keepers vessel ledger", jurisdictions: ["us-ny"], topK: 50 }, DEFAULT_SEARCH_TUNING, "vector");
  expect(stranger.map((r) => r.source)).not.toContain("Harbour policy");
});
