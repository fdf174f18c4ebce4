/**
 * Search worker threads, each with its own read-only connection (WAL readers never block
 * each other) and its own in-memory int8 vectors (vector-memory.ts). A whole search runs on
 * a worker, so concurrent requests use every core while the request's thread only charges,
 * dispatches and replies; a search the request's thread runs itself (one alone, a worker
 * failed, or the quality benchmark's own tuning) can still send its vector half to a
 * worker, which scans the vectors while that thread scores BM25.
 *
 * Workers start on first use and never keep a process alive. A worker that crashes or does
 * not answer in time is retired: its tasks fail and their callers run them on their own
 * thread. A replacement starts only after a pause, so a worker that cannot start at all
 * costs one failed start per pause, not one per search.
 */
import type { Logger } from "../log";
import { isCompiled } from "../platform/assets";
import type { SearchMatch, SearchRequest } from "./request";
import type { SearchPart, SearchTrace } from "./trace";
import type { VectorHit } from "./vector-knn";
import type { VectorTask } from "./vector-leg";

export type WorkerRequest =
  | { type: "open"; databaseFile: string; cacheDir: string; wholeSearches: boolean }
  | { type: "search"; id: number; task: VectorTask }
  | { type: "whole"; id: number; request: SearchRequest; traced: boolean }
  | { type: "close" };

export type WorkerReply =
  | { id: number; hits: VectorHit[]; elapsedMs: number }
  | { id: number; results: SearchMatch[]; elapsedMs: number; parts?: [SearchPart, number][] }
  | { id: number; error: string };

type Answer = Exclude<WorkerReply, { error: string }>;

// Compiled, each entry point sits under the binary's root folder (scripts/build.ts adds this one).
const WORKER_URL = isCompiled() ? "./search/vector-worker.ts" : new URL("./vector-worker.ts", import.meta.url).href;
/** A vector task takes milliseconds; one this late means a stuck worker. */
const TASK_TIMEOUT_MS = 30_000;
const RESPAWN_PAUSE_MS = 5_000;
const CLOSE_TIMEOUT_MS = 2_000;

export interface VectorSearchPoolOptions {
  databaseFile: string;
  cacheDir: string;
  workers: number;
  /**
   * Workers run whole searches (with the static embedder, which each loads: the others stay
   * on the request's thread, TF.js too heavy to load per thread and a remote one no faster);
   * otherwise only vector tasks.
   */
  wholeSearches?: boolean;
  log: Logger;
  taskTimeoutMs?: number;
  /** How long after a worker failed no new one is started. */
  respawnPauseMs?: number;
  /** The worker's entry point; tests give workers that crash or stall. */
  workerUrl?: string;
}

interface Pending {
  resolve(answer: Answer): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
  trace?: SearchTrace;
  postedMs: number;
}

interface Slot {
  worker: Worker;
  pending: Map<number, Pending>;
}

export class VectorSearchPool {
  private readonly slots: Slot[] = [];
  /** Searches running on the request's thread now (service.ts): while one does, others go whole to a worker. */
  searchesHere = 0;
  /** Whole searches posted to the workers and not yet answered: while one is, others go whole to a worker too. */
  wholeSearchesRunning = 0;
  private nextId = 0;
  private closed = false;
  private noSpawnBeforeMs = 0;

  constructor(private readonly options: VectorSearchPoolOptions) {}

  /** The vector half of a search. `trace`, if given, gets the worker's own time and the round trip's. */
  async search(task: VectorTask, trace?: SearchTrace): Promise<VectorHit[]> {
    const answer = await this.post((id) => ({ type: "search", id, task }), trace);
    if (!("hits" in answer)) throw new Error("search worker answered a vector task with results");
    trace?.add("vectorInWorker", answer.elapsedMs);
    return answer.hits;
  }

  get runsWholeSearches(): boolean {
    return this.options.wholeSearches === true;
  }

  /**
   * A whole search (default tuning, hybrid) on a worker. Rejects if the worker fails or the
   * search throws there: the caller runs it on its own thread, where an error keeps its type.
   * `trace`, if given, gets the worker's parts and the round trip ("workerRoundTrip").
   */
  async searchWhole(request: SearchRequest, trace?: SearchTrace): Promise<SearchMatch[]> {
    if (!this.runsWholeSearches) throw new Error("search workers run vector tasks only");
    this.wholeSearchesRunning++;
    let answer: Answer;
    try {
      answer = await this.post((id) => ({ type: "whole", id, request, traced: trace !== undefined }), trace);
    } finally {
      this.wholeSearchesRunning--;
    }
    if (!("results" in answer)) throw new Error("search worker answered a search with vector hits");
    for (const [part, ms] of answer.parts ?? []) trace?.add(part, ms);
    return answer.results;
  }

  private post(message: (id: number) => WorkerRequest, trace: SearchTrace | undefined): Promise<Answer> {
    if (this.closed) return Promise.reject(new Error("the search workers are closed"));
    const slot = this.pick();
    if (slot === undefined) return Promise.reject(new Error("no search worker: pausing after a failure"));
    const id = ++this.nextId;
    const timeoutMs = this.options.taskTimeoutMs ?? TASK_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.retire(slot, `no answer within ${timeoutMs} ms`), timeoutMs);
      slot.pending.set(id, { resolve, reject, timer, trace, postedMs: performance.now() });
      slot.worker.postMessage(message(id));
    });
  }

  /** Workers running now (they start on first use). */
  get size(): number {
    return this.slots.length;
  }

  /** Lets each worker close its connection, then stops it. */
  async close(): Promise<void> {
    this.closed = true;
    const slots = this.slots.splice(0);
    await Promise.all(
      slots.map(async (slot) => {
        const exited = new Promise((done) => slot.worker.addEventListener("close", done));
        slot.worker.postMessage({ type: "close" } satisfies WorkerRequest);
        await Promise.race([exited, Bun.sleep(CLOSE_TIMEOUT_MS)]);
        this.failPending(slot, new Error("the search workers are closed"));
        slot.worker.terminate();
      }),
    );
  }

  /** An idle worker, else a new one while under the limit (and not pausing), else the least busy. */
  private pick(): Slot | undefined {
    const idle = this.slots.find((s) => s.pending.size === 0);
    if (idle !== undefined) return idle;
    if (this.slots.length < this.options.workers && Date.now() >= this.noSpawnBeforeMs) return this.spawn();
    return this.slots.reduce<Slot | undefined>((a, b) => (a === undefined || b.pending.size < a.pending.size ? b : a), undefined);
  }

  private spawn(): Slot {
    const worker = new Worker(this.options.workerUrl ?? WORKER_URL, { ref: false });
    const slot: Slot = { worker, pending: new Map() };
    worker.addEventListener("message", (event: MessageEvent<WorkerReply>) => this.settle(slot, event.data));
    worker.addEventListener("error", (event: ErrorEvent) => this.retire(slot, event.message));
    const { databaseFile, cacheDir } = this.options;
    worker.postMessage({ type: "open", databaseFile, cacheDir, wholeSearches: this.runsWholeSearches } satisfies WorkerRequest);
    this.slots.push(slot);
    return slot;
  }

  private settle(slot: Slot, reply: WorkerReply): void {
    const pending = slot.pending.get(reply.id);
    if (pending === undefined) return;
    slot.pending.delete(reply.id);
    clearTimeout(pending.timer);
    if ("error" in reply) return pending.reject(new Error(reply.error));
    pending.trace?.add("hits" in reply ? "vectorRoundTrip" : "workerRoundTrip", performance.now() - pending.postedMs);
    pending.resolve(reply);
  }

  /** Stops a worker that crashed or stalled: its tasks fail now; a search after the pause starts a fresh one. */
  private retire(slot: Slot, reason: string): void {
    const index = this.slots.indexOf(slot);
    if (index < 0) return; // already retired (a late error after a timeout)
    this.slots.splice(index, 1);
    this.noSpawnBeforeMs = Date.now() + (this.options.respawnPauseMs ?? RESPAWN_PAUSE_MS);
    slot.worker.terminate();
    this.failPending(slot, new Error(`search worker failed: ${reason}`));
    this.options.log.warn("search_worker_failed", { reason });
  }

  private failPending(slot: Slot, error: Error): void {
    for (const pending of slot.pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    slot.pending.clear();
  }
}
