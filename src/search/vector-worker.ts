/**
 * Entry point of a search worker thread (see vector-pool.ts): answers vector tasks from its
 * own connection to the database. The connection is query-only: this thread never writes.
 */
import { Database } from "bun:sqlite";
import { loadVectorExtension } from "../db/vector-extension";
import { CentroidCache } from "./ivf-store";
import { VectorMemory } from "./vector-memory";
import { vectorCandidates, type VectorReader } from "./vector-leg";
import type { WorkerReply, WorkerRequest } from "./vector-pool";

declare const self: Worker;

let connection: Promise<VectorReader> | undefined;

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

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const message = event.data;
  if (message.type === "open") {
    connection = openReader(message.databaseFile, message.cacheDir);
  } else if (message.type === "close") {
    (await connection?.catch(() => undefined))?.db.close();
    process.exit(0);
  } else {
    let reply: WorkerReply;
    try {
      if (connection === undefined) throw new Error("search worker has no database");
      const reader = await connection;
      const started = performance.now();
      const hits = vectorCandidates(reader, message.task);
      reply = { id: message.id, hits, elapsedMs: performance.now() - started };
    } catch (error) {
      reply = { id: message.id, error: error instanceof Error ? error.message : String(error) };
    }
    postMessage(reply);
  }
};
