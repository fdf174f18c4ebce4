/**
 * Entry point of a search worker thread (see vector-pool.ts): answers whole searches and
 * vector tasks from its own connection to the database, with its own in-memory int8
 * vectors (vector-memory.ts). The connection is query-only: this thread never writes.
 */
import { Database } from "bun:sqlite";
import { loadVectorExtension } from "../db/vector-extension";
import { StaticEmbedder } from "./embedder/static";
import { CentroidCache } from "./ivf-store";
import { Lexicon } from "./lexicon";
import { SearchIndex, type SearchDeps } from "./search-index";
import { searchKnowledgeBase } from "./service";
import { SearchTrace } from "./trace";
import { DEFAULT_SEARCH_TUNING } from "./tuning";
import { vectorCandidates, type VectorReader } from "./vector-leg";
import { VectorMemory } from "./vector-memory";
import type { WorkerReply, WorkerRequest } from "./vector-pool";

declare const self: Worker;

let connection: Promise<VectorReader> | undefined;
let wholeSearches = false;
/** Built at the first whole search: a worker that only scans vectors never loads the embedder or lexicon. */
let searchDeps: Promise<SearchDeps> | undefined;

async function openReader(databaseFile: string, cacheDir: string): Promise<VectorReader> {
  const db = new Database(databaseFile, { strict: true });
  db.exec("PRAGMA query_only = ON");
  db.exec("PRAGMA busy_timeout = 10000");
  await loadVectorExtension(db, cacheDir);
  const vectorMemory = new VectorMemory(db);
  // Loaded in slices between tasks; until it is, tasks scan vec0.
  void vectorMemory.load();
  return { db, centroids: new CentroidCache(db), vectorMemory };
}

/** The static embedder only: importing the others would bundle TF.js into this entry point (0.8 MB of the binary). */
async function openSearchDeps(reader: VectorReader): Promise<SearchDeps> {
  const [embedder, lexicon] = await Promise.all([StaticEmbedder.load(), Lexicon.load()]);
  return { searchIndex: new SearchIndex(reader.db, embedder, reader.vectorMemory), lexicon };
}

async function answer(message: Extract<WorkerRequest, { type: "search" | "whole" }>): Promise<WorkerReply> {
  if (connection === undefined) throw new Error("search worker has no database");
  const reader = await connection;
  if (message.type === "search") {
    const started = performance.now();
    const hits = vectorCandidates(reader, message.task);
    return { id: message.id, hits, elapsedMs: performance.now() - started };
  }
  if (!wholeSearches) throw new Error("search worker runs vector tasks only");
  searchDeps ??= openSearchDeps(reader);
  const deps = await searchDeps;
  const started = performance.now();
  const trace = message.traced ? new SearchTrace() : undefined;
  const results = await searchKnowledgeBase(deps, message.request, DEFAULT_SEARCH_TUNING, "hybrid", trace);
  return { id: message.id, results, elapsedMs: performance.now() - started, ...(trace ? { parts: [...trace.ms] } : {}) };
}

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const message = event.data;
  if (message.type === "open") {
    connection = openReader(message.databaseFile, message.cacheDir);
    wholeSearches = message.wholeSearches;
  } else if (message.type === "close") {
    (await connection?.catch(() => undefined))?.db.close();
    process.exit(0);
  } else {
    let reply: WorkerReply;
    try {
      reply = await answer(message);
    } catch (error) {
      reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
    }
    postMessage(reply);
    // Tasks queued back to back would starve the in-memory copy's load: it reads a slice now.
    void connection?.then((reader) => reader.vectorMemory?.advanceLoad(), () => undefined);
  }
};
