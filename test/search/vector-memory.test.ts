import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { deleteDocumentChunks, indexDocument } from "../../src/search/indexing";
import { readMetaValue, VECTOR_GENERATION } from "../../src/search/meta-store";
import type { SearchScope } from "../../src/search/scopes";
import type { SearchIndex } from "../../src/search/search-index";
import { vectorCandidates } from "../../src/search/vector-leg";
import { exactVectorSearch, vectorSearch } from "../../src/search/vector-knn";
import { clusterSharedVectors } from "../../src/search/vector-layout";
import { VectorMemory } from "../../src/search/vector-memory";
import questionsFile from "../search-quality/questions.json";
import { sampleCorpusIndex } from "../helpers/search-index";

// The sample corpus clustered into a few clusters (the large-corpus path at test size), with
// two organisations' own documents: the in-memory shortlist must pick exactly what vec0 picks.
let dir: string;
let deps: { db: Database; searchIndex: SearchIndex };
let all: string[];
let memory: VectorMemory;

const embed = async (text: string) => (await deps.searchIndex.embedder.embed([text]))[0]!;
const scopeOf = (jurisdictions: string[], orgScopes: string[] = []): SearchScope => ({ allShared: jurisdictions === all, jurisdictions, orgScopes });

async function orgDocument(documentId: string, orgId: string, text: string, jurisdictions: string[] = []): Promise<void> {
  await indexDocument(deps, { documentId, ownerOrgId: orgId, jurisdictions, passages: [{ source: "own", citationPath: documentId, text, position: 0 }] });
}

beforeAll(async () => {
  const index = await sampleCorpusIndex(["org-a", "org-b"]);
  dir = index.dir;
  deps = index;
  const { db } = index;
  await orgDocument("a-1", "org-a", "Our policy on notifying the supervisory authority of a personal data breach within 72 hours.");
  await orgDocument("b-1", "org-b", "Our policy on notifying the supervisory authority of a personal data breach within 72 hours.", ["eu"]);
  all = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  clusterSharedVectors(db, deps.searchIndex.embedder.dimensions, { clusters: 8, sampleVectors: 400, rounds: 20, batchVectors: 128, seed: 1 });
  memory = new VectorMemory(db);
  expect(await memory.load()).toBe(true);
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the in-memory shortlist gives exactly vec0's results, clustered and filtered", async () => {
  const centroids = deps.searchIndex.centroids.current();
  expect(centroids?.count).toBe(8);
  const inMemory = memory.shortlister();
  expect(inMemory).toBeDefined();
  expect(memory.size.rows).toBeGreaterThan(800);
  const filters: SearchScope[] = [scopeOf(all, ["org:org-a:*"]), scopeOf(["eu"], ["org:org-b:eu"]), scopeOf(all.slice(0, 8)), scopeOf(["us-ny", "us-ca"])];
  let compared = 0;
  for (const question of questionsFile.questions.slice(0, 25)) {
    const q = await embed(question.query);
    for (const scope of filters) {
      for (const probes of [1, 3, 8]) {
        const viaVec0 = vectorSearch(deps.db, centroids, q, "org-a", scope, 20, 10, probes);
        const viaMemory = vectorSearch(deps.db, centroids, q, "org-a", scope, 20, 10, probes, inMemory);
        expect(viaMemory).toEqual(viaVec0);
        compared += viaVec0.length;
      }
    }
  }
  expect(compared).toBeGreaterThan(1000);
});

test("with every cluster probed, the in-memory shortlist finds the exact top 10", async () => {
  const inMemory = memory.shortlister()!;
  let found = 0;
  let wanted = 0;
  for (const question of questionsFile.questions.slice(0, 20)) {
    const q = await embed(question.query);
    const hits = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "org-a", scopeOf(all), 50, 10, 8, inMemory);
    const exact = new Set(exactVectorSearch(deps.db, q, all, 10).map((h) => h.chunkId));
    found += hits.filter((h) => exact.has(h.chunkId)).length;
    wanted += exact.size;
  }
  expect(found / wanted).toBeGreaterThanOrEqual(0.97);
});

test("another organisation's passage is never returned from memory", async () => {
  const q = await embed("notifying the supervisory authority of a personal data breach within 72 hours");
  const ownIds = (orgId: string) => deps.db.query<{ id: number }, [string]>("SELECT id FROM search_chunks WHERE owner_org_id = ?").all(orgId).map((r) => r.id);
  const hits = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "org-a", scopeOf(["eu"], ["org:org-a:*"]), 50, 100, 8, memory.shortlister()!);
  const ids = new Set(hits.map((h) => h.chunkId));
  expect(ownIds("org-a").every((id) => ids.has(id))).toBe(true);
  expect(ownIds("org-b").some((id) => ids.has(id))).toBe(false);
  // org-b's own passage (in "eu") is reached only by org-b's own search.
  const asB = vectorSearch(deps.db, deps.searchIndex.centroids.current(), q, "org-b", scopeOf(["eu"], ["org:org-b:eu"]), 50, 100, 8, memory.shortlister()!);
  expect(asB.some((h) => ownIds("org-b").includes(h.chunkId))).toBe(true);
  expect(asB.some((h) => ownIds("org-a").includes(h.chunkId))).toBe(false);
});

test("a jurisdiction the query names joins from memory with the passages an exact scan of it finds", async () => {
  const reader = { db: deps.db, centroids: deps.searchIndex.centroids, vectorMemory: memory };
  const named = ["us-tx", "us-ny"];
  let found = 0;
  let wanted = 0;
  for (const question of questionsFile.questions.slice(0, 20)) {
    const queryVector = await embed(question.query);
    for (const slug of named) {
      const focus = scopeOf([slug], []);
      const task = { queryVector, orgId: "org-a", scope: scopeOf(all, ["org:org-a:*"]), focus, shortlist: 50, limit: 10, probes: 3 };
      const ids = new Set(vectorCandidates(reader, task).map((h) => h.chunkId));
      const exact = exactVectorSearch(deps.db, queryVector, [slug], 10);
      found += exact.filter((h) => ids.has(h.chunkId)).length;
      wanted += exact.length;
    }
  }
  expect(wanted).toBeGreaterThan(200);
  expect(found / wanted).toBeGreaterThanOrEqual(0.97);
});

test("an insert or delete is seen by the next search, then by the reloaded copy", async () => {
  const reader = { db: deps.db, centroids: deps.searchIndex.centroids, vectorMemory: memory };
  const text = "Quarterly attestation of zeppelin hangar fire suppression readiness to the harbour master.";
  const task = async (orgScopes: string[]) => ({ queryVector: await embed(text), orgId: "org-a", scope: scopeOf(["eu"], orgScopes), shortlist: 20, limit: 5, probes: 2 });
  const before = readMetaValue(deps.db, VECTOR_GENERATION);
  await orgDocument("a-2", "org-a", text, ["eu"]);
  expect(readMetaValue(deps.db, VECTOR_GENERATION)).not.toBe(before);
  const newId = deps.db.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'a-2'").get()!.id;
  // The copy is stale: the next search scans vec0 and finds the new passage.
  expect(memory.shortlister()).toBeUndefined();
  expect(vectorCandidates(reader, await task(["org:org-a:eu", "org:org-a:*"]))[0]!.chunkId).toBe(newId);
  expect(await memory.load()).toBe(true);
  expect(memory.shortlister()).toBeDefined();
  expect(vectorCandidates(reader, await task(["org:org-a:eu", "org:org-a:*"]))[0]!.chunkId).toBe(newId);
  deleteDocumentChunks(deps, "a-2");
  expect(memory.shortlister()).toBeUndefined();
  expect(vectorCandidates(reader, await task(["org:org-a:eu", "org:org-a:*"])).some((h) => h.chunkId === newId)).toBe(false);
  expect(await memory.load()).toBe(true);
  expect(vectorCandidates(reader, await task(["org:org-a:eu", "org:org-a:*"])).some((h) => h.chunkId === newId)).toBe(false);
});

test("a copy loads while tasks arrive back to back: each answer lets it read a slice", async () => {
  // A stream of messages keeps setImmediate (the load's pause between slices) from firing, as
  // a search worker's queued tasks do; the worker calls advanceLoad after each answer.
  const fresh = new VectorMemory(deps.db);
  let loaded = false;
  void fresh.load().then((ok) => (loaded = ok));
  const { port1, port2 } = new MessageChannel();
  let answered = 0;
  await new Promise<void>((resolve) => {
    port2.onmessage = () => {
      answered++;
      fresh.advanceLoad();
      if (loaded || answered >= 200) resolve();
      else port1.postMessage("task");
    };
    port1.postMessage("task");
    port1.postMessage("task");
  });
  port1.close();
  port2.close();
  expect(loaded).toBe(true);
  expect(fresh.size.rows).toBe(memory.size.rows);
  expect(answered).toBeLessThan(20);
});
