import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { clustersHolding } from "../../src/search/ivf-store";
import { maintainSearchIndex } from "../../src/search/maintenance";
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

const recordedPairs = () =>
  deps.db.query<{ cluster: number; jurisdiction: string }, []>("SELECT cluster, jurisdiction FROM search_ivf_cluster_jurisdictions ORDER BY cluster, jurisdiction").all();
const actualPairs = () =>
  deps.db
    .query<{ cluster: number; jurisdiction: string }, []>(`SELECT DISTINCT cluster, jurisdiction FROM ${VECTOR_TABLE} WHERE owner = 'shared' ORDER BY cluster, jurisdiction`)
    .all();

test("each cluster's jurisdictions are on record, including a passage's added after clustering", async () => {
  expect(recordedPairs()).toEqual(actualPairs());
  await indexDocument(deps, {
    documentId: "corpus:late-virgin-islands",
    ownerOrgId: null,
    jurisdictions: ["us-vi"],
    passages: [{ source: "Late Act", citationPath: "Late Act > 2", text: "Ferry operators must publish their winter timetables by October.", position: 0 }],
  });
  expect(recordedPairs()).toEqual(actualPairs());
});

test("a filtered search probes only clusters holding its jurisdictions: that many probes find what an exact scan finds", async () => {
  const filter = ["us-ny", "us-ca", "us-vi"];
  const holding = clustersHolding(deps.db, filter);
  expect(holding.size).toBeGreaterThan(0);
  expect(holding.size).toBeLessThan(CLUSTERS);
  for (const text of ["notify the attorney general of a breach", "right to delete personal information", "ferry timetables in winter"]) {
    const q = await embed(text);
    const probed = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "nobody", { allShared: false, jurisdictions: filter, orgScopes: [] }, 50, 10, holding.size);
    expect(probed.map((h) => h.chunkId)).toEqual(exactVectorSearch(deps.db, q, filter, 10).map((h) => h.chunkId));
  }
});

test("an organisation's passage never reaches another organisation's filtered vector search", async () => {
  deps.db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-owner', 'Owner', 0), ('org-other', 'Other', 0)").run();
  await indexDocument(deps, {
    documentId: "org-doc:ivf",
    ownerOrgId: "org-owner",
    jurisdictions: ["us-ny"],
    passages: [{ source: "Internal", citationPath: "Internal > 1", text: "Our internal breach playbook for New York customers.", position: 0 }],
  });
  const q = await embed("Our internal breach playbook for New York customers.");
  const centroids = deps.searchIndex.centroids.current();
  const scope = (orgId: string) => ({ allShared: false, jurisdictions: ["us-ny"], orgScopes: [`org:${orgId}:us-ny`] });
  const own = deps.db.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'org-doc:ivf'").get()!.id;
  expect(vectorSearch(deps.db, centroids, q, "org-owner", scope("org-owner"), 50, 10, CLUSTERS).map((h) => h.chunkId)).toContain(own);
  expect(vectorSearch(deps.db, centroids, q, "org-other", scope("org-other"), 50, 10, CLUSTERS).map((h) => h.chunkId)).not.toContain(own);
  expect(recordedPairs()).toEqual(actualPairs());
});

test("maintenance records the clusters' jurisdictions of an index clustered before they were recorded", async () => {
  deps.db.exec("DELETE FROM search_ivf_cluster_jurisdictions");
  const report = await maintainSearchIndex({ searchIndex: deps.searchIndex, config: { embedder: { kind: "static" } }, log: createLogger("silent") });
  expect(report.clusterJurisdictions).toBe(actualPairs().length);
  expect(recordedPairs()).toEqual(actualPairs());
  expect((await maintainSearchIndex({ searchIndex: deps.searchIndex, config: { embedder: { kind: "static" } }, log: createLogger("silent") })).clusterJurisdictions).toBeUndefined();
});
