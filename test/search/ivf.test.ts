import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { importSampleCorpus } from "../../src/search/corpus/import";
import type { SearchIndex } from "../../src/search/search-index";
import { indexDocument } from "../../src/search/indexing";
import { exactVectorSearch, vectorSearch } from "../../src/search/vector-knn";
import { clusterSharedVectors } from "../../src/search/vector-layout";
import { VECTOR_TABLE } from "../../src/search/vector-store";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// The sample corpus is far below the clustering threshold, so it is clustered explicitly
// into a few clusters: the same code path as a large corpus, at test size.
let dir: string;
let deps: { db: Database; searchIndex: SearchIndex };
let all: string[];
const CLUSTERS = 8;

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  deps = { db, searchIndex: await readySearchIndex(db) };
  await importSampleCorpus(deps);
  all = deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  clusterSharedVectors(deps.db, deps.searchIndex.embedder.dimensions, { clusters: CLUSTERS, sampleVectors: 400, rounds: 20, batchVectors: 128, seed: 1 });
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

const embed = async (text: string) => (await deps.searchIndex.embedder.embed([text]))[0]!;

test("every shared vector moves into a cluster partition", () => {
  expect(deps.searchIndex.centroids.current()?.count).toBe(CLUSTERS);
  const unclustered = deps.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${VECTOR_TABLE} WHERE owner = 'shared' AND cluster = 0`).get()!.n;
  expect(unclustered).toBe(0);
});

test("reading every cluster finds what a full scan finds", async () => {
  const q = await embed("notify the supervisory authority of a personal data breach within 72 hours");
  const probed = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "nobody", { allShared: true, jurisdictions: all, orgScopes: [] }, 50, 10, CLUSTERS);
  const exact = exactVectorSearch(deps.db, q, all, 10);
  expect(probed.map((h) => h.chunkId)).toEqual(exact.map((h) => h.chunkId));
});

test("a small jurisdiction is filtered inside each probe and widened, never starved", async () => {
  const q = await embed("notify the supervisory authority of a personal data breach within 72 hours");
  const hits = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "nobody", { allShared: false, jurisdictions: ["us-vi"], orgScopes: [] }, 50, 10, 1);
  const exact = exactVectorSearch(deps.db, q, ["us-vi"], 10);
  expect(exact.length).toBeGreaterThan(0);
  expect(hits.map((h) => h.chunkId)).toEqual(exact.map((h) => h.chunkId));
});

test("a passage added after clustering joins its nearest cluster and is found", async () => {
  await indexDocument(deps, {
    documentId: "corpus:late-addition",
    ownerOrgId: null,
    jurisdictions: ["eu"],
    passages: [{ source: "Late Act", citationPath: "Late Act > 1", text: "Quarterly lighthouse maintenance logs must be filed with the harbour master.", position: 0 }],
  });
  const unclustered = deps.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${VECTOR_TABLE} WHERE owner = 'shared' AND cluster = 0`).get()!.n;
  expect(unclustered).toBe(0);
  const q = await embed("Quarterly lighthouse maintenance logs must be filed with the harbour master.");
  const [best] = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "nobody", { allShared: true, jurisdictions: all, orgScopes: [] }, 50, 1, 1);
  const row = deps.db.query<{ citation_path: string }, [number]>("SELECT citation_path FROM search_chunks WHERE id = ?").get(best!.chunkId);
  expect(row?.citation_path).toBe("Late Act > 1");
});
