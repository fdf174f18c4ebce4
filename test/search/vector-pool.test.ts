import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { cacheDir, databasePath, openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { importSampleCorpus } from "../../src/search/corpus/import";
import type { SearchDeps } from "../../src/search/search-index";
import type { SearchRequest } from "../../src/search/request";
import { Lexicon } from "../../src/search/lexicon";
import { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { SearchTrace } from "../../src/search/trace";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { VectorSearchPool } from "../../src/search/vector-pool";
import questionsFile from "../search-quality/questions.json";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// The sample corpus searched on one thread and with the vector half on worker threads.
let dir: string;
let local: SearchDeps & { db: Database };
let all: string[];
const logLines: string[] = [];
const log = createLogger("warn", (line) => logLines.push(line));

function pool(options: { workerUrl?: string; taskTimeoutMs?: number; respawnPauseMs?: number; workers?: number; wholeSearches?: boolean } = {}): VectorSearchPool {
  return new VectorSearchPool({ databaseFile: databasePath(dir), cacheDir: cacheDir(dir), workers: 2, log, ...options });
}

const fixture = (name: string) => join(import.meta.dir, "fixtures", name);
const request = (query: string, jurisdictions = all): SearchRequest => ({ orgId: "org-a", query, jurisdictions, topK: 10 });

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  local = { db, searchIndex: await readySearchIndex(db) };
  await importSampleCorpus(local);
  all = local.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  local.db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
});

afterAll(() => {
  local.db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("searches give the same results with the vector half on worker threads", async () => {
  const workers = pool();
  const threaded: SearchDeps = { ...local, vectorSearchPool: workers };
  const requests = [
    ...questionsFile.questions.map((q) => request(q.query)),
    request("New York breach notice to the attorney general", ["us-ny", "us-ca", "eu"]),
    request("right to erasure", ["eu"]),
  ];
  // Concurrently, so both workers are busy at once.
  const [a, b] = await Promise.all([
    Promise.all(requests.map((r) => searchKnowledgeBase(threaded, r))),
    Promise.all(requests.map((r) => searchKnowledgeBase(local, r))),
  ]);
  expect(a).toEqual(b);
  expect(a.every((results) => results.length > 0)).toBe(true);
  expect(workers.size).toBe(2);
  await workers.close();
  expect(logLines).toEqual([]);
}, 60_000); // 109 searches twice over, on a machine other test runs share: minutes under load, not seconds

test("searches beside one on the caller's thread run whole on the workers, with the caller's thread's results", async () => {
  const workers = pool({ wholeSearches: true });
  // A worker loads the lexicon as a server does, so the caller's thread does too here.
  const here: SearchDeps = { ...local, lexicon: await Lexicon.load() };
  const threaded: SearchDeps = { ...here, vectorSearchPool: workers };
  const requests = [
    ...questionsFile.questions.slice(0, 20).map((q) => request(q.query)),
    request("New York breach notice to the attorney general", ["us-ny", "us-ca", "eu"]),
    request("right to erasure", ["eu"]),
  ];
  const traces = requests.map(() => new SearchTrace());
  const [a, b] = await Promise.all([
    Promise.all(requests.map((r, i) => searchKnowledgeBase(threaded, r, DEFAULT_SEARCH_TUNING, "hybrid", traces[i]))),
    Promise.all(requests.map((r) => searchKnowledgeBase(here, r))),
  ]);
  expect(a).toEqual(b);
  expect(a.every((results) => results.length > 0)).toBe(true);
  // The first ran on the caller's thread (its vector half on a worker); every one beside it on a
  // worker: the round trip and the worker's own parts are on its trace.
  const onWorker = (t: SearchTrace) => (t.ms.get("workerRoundTrip") ?? 0) > 0 && (t.ms.get("bm25") ?? 0) > 0;
  expect(onWorker(traces[0]!)).toBe(false);
  expect((traces[0]!.ms.get("vectorRoundTrip") ?? 0) > 0).toBe(true);
  expect(traces.slice(1).every(onWorker)).toBe(true);
  expect(workers.size).toBe(2);
  await workers.close();
}, 60_000);

test("a search the worker cannot run answers on the caller's thread, with its error if it fails there too", async () => {
  const crashing = pool({ workerUrl: fixture("crashing-worker.ts"), workers: 1, respawnPauseMs: 0, wholeSearches: true });
  const expected = await searchKnowledgeBase(local, request("personal data breach notification"));
  logLines.length = 0;
  crashing.searchesHere = 1;
  expect(await searchKnowledgeBase({ ...local, vectorSearchPool: crashing }, request("personal data breach notification"))).toEqual(expected);
  expect(logLines.join("")).toContain("worker blew up");
  crashing.searchesHere = 0;
  await crashing.close();
  // A search that throws in the worker (an index that needs maintenance) throws the same here.
  const own = tempDir();
  const db = await openDatabase(own);
  const workers = new VectorSearchPool({ databaseFile: databasePath(own), cacheDir: cacheDir(own), workers: 1, wholeSearches: true, log });
  const unmaintained = new SearchIndex(db, local.searchIndex.embedder);
  workers.searchesHere = 1; // as if a search were running on this thread: this one goes to the worker
  await expect(searchKnowledgeBase({ searchIndex: unmaintained, vectorSearchPool: workers }, request("right to erasure", ["eu"]))).rejects.toThrow("needs maintenance");
  await workers.close();
  db.close();
  rmSync(own, { recursive: true, force: true });
});

test("a worker that crashes is replaced, and its search still answers on the caller's thread", async () => {
  const workers = pool({ workerUrl: fixture("crashing-worker.ts"), workers: 1, respawnPauseMs: 0 });
  const expected = await searchKnowledgeBase(local, request("personal data breach notification"));
  logLines.length = 0;
  const first = await searchKnowledgeBase({ ...local, vectorSearchPool: workers }, request("personal data breach notification"));
  expect(first).toEqual(expected);
  expect(workers.size).toBe(0);
  expect(logLines.join("")).toContain("worker blew up");
  // The next search starts a fresh worker (which fails the same way, and is answered the same way).
  expect(await searchKnowledgeBase({ ...local, vectorSearchPool: workers }, request("personal data breach notification"))).toEqual(expected);
  expect(logLines).toHaveLength(2);
  await workers.close();
});

test("after a failure no worker starts for a pause: searches run on the caller's thread meanwhile", async () => {
  const workers = pool({ workerUrl: fixture("crashing-worker.ts"), workers: 1, respawnPauseMs: 60_000 });
  const expected = await searchKnowledgeBase(local, request("right to data portability"));
  logLines.length = 0;
  for (let i = 0; i < 3; i++) expect(await searchKnowledgeBase({ ...local, vectorSearchPool: workers }, request("right to data portability"))).toEqual(expected);
  expect(logLines).toHaveLength(1);
  expect(workers.size).toBe(0);
  await workers.close();
});

test("a worker that never answers is retired after the task timeout", async () => {
  const workers = pool({ workerUrl: fixture("stalled-worker.ts"), taskTimeoutMs: 300, workers: 1, respawnPauseMs: 0 });
  const expected = await searchKnowledgeBase(local, request("security freeze on a credit report"));
  logLines.length = 0;
  const started = performance.now();
  expect(await searchKnowledgeBase({ ...local, vectorSearchPool: workers }, request("security freeze on a credit report"))).toEqual(expected);
  expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  expect(logLines.join("")).toContain("no answer within 300 ms");
  expect(workers.size).toBe(0);
  await workers.close();
});

test("closing the pool closes the workers' connections and refuses new tasks", async () => {
  const own = tempDir();
  const db = await openDatabase(own);
  const searchIndex = await readySearchIndex(db, local.searchIndex.embedder);
  await importSampleCorpus({ searchIndex });
  db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
  const workers = new VectorSearchPool({ databaseFile: databasePath(own), cacheDir: cacheDir(own), workers: 1, log });
  expect(await searchKnowledgeBase({ searchIndex, vectorSearchPool: workers }, request("right to erasure", ["eu"]))).not.toEqual([]);
  await workers.close();
  await expect(workers.search({ queryVector: new Float32Array(256), orgId: "org-a", scope: { allShared: true, jurisdictions: [], orgScopes: [] }, shortlist: 50, limit: 10, probes: 16 })).rejects.toThrow("closed");
  // The last connection to close removes the write-ahead log: none is left open in a worker.
  db.close();
  expect(existsSync(`${databasePath(own)}-wal`)).toBe(false);
  rmSync(own, { recursive: true, force: true });
});

test("a search beside one running whole on a worker runs whole on a worker too, not on the caller's thread", async () => {
  const workers = pool({ wholeSearches: true });
  const threaded: SearchDeps = { ...local, lexicon: await Lexicon.load(), vectorSearchPool: workers };
  const [first, second] = [new SearchTrace(), new SearchTrace()];
  workers.searchesHere = 1; // as if a search were running on this thread: the first goes whole to a worker
  const running = searchKnowledgeBase(threaded, request("right to erasure", ["eu"]), DEFAULT_SEARCH_TUNING, "hybrid", first);
  workers.searchesHere = 0;
  expect(workers.wholeSearchesRunning).toBe(1);
  await searchKnowledgeBase(threaded, request("personal data breach notification"), DEFAULT_SEARCH_TUNING, "hybrid", second);
  await running;
  const onWorker = (t: SearchTrace) => (t.ms.get("workerRoundTrip") ?? 0) > 0;
  expect(onWorker(first)).toBe(true);
  expect(onWorker(second)).toBe(true);
  expect(workers.wholeSearchesRunning).toBe(0);
  await workers.close();
}, 60_000);
