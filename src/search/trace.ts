/**
 * Where one search's time goes, part by part: the search benchmark passes one in and prints
 * the parts' percentiles. A search without one pays nothing for it.
 */
export const SEARCH_PARTS = [
  "embedding",
  "analysis",
  "scope",
  "bm25",
  "bm25Expansions",
  "prepareRerank",
  "vectorWait",
  "citations",
  "fusion",
  "rerank",
  "materialise",
  /** Not a lap of the request's thread: the vector half's own time on a search worker. */
  "vectorInWorker",
  /** Not a lap: from posting the vector task to its answer arriving (the worker's time plus scheduling). */
  "vectorRoundTrip",
  /** Not a lap: from posting a whole search to a worker to its answer arriving (the parts above are the worker's). */
  "workerRoundTrip",
] as const;

export type SearchPart = (typeof SEARCH_PARTS)[number];

/**
 * CPU time of the calling thread so far, in ms (getrusage of the thread, ~2 µs a call): on a
 * shared machine wall time also counts other processes' turns on the cores.
 */
export function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

export class SearchTrace {
  /** Wall time by part. */
  readonly ms = new Map<SearchPart, number>();
  /** CPU time of the thread that ran each lap, by part (laps only). */
  readonly cpuMs = new Map<SearchPart, number>();
  #lastMs = performance.now();
  #lastCpuMs = threadCpuMs();

  /** Charges the time since the previous lap (or since the trace was made) to `part`. */
  lap(part: SearchPart): void {
    const now = performance.now();
    const cpu = threadCpuMs();
    this.add(part, now - this.#lastMs);
    this.cpuMs.set(part, (this.cpuMs.get(part) ?? 0) + cpu - this.#lastCpuMs);
    this.#lastMs = now;
    this.#lastCpuMs = cpu;
  }

  add(part: SearchPart, ms: number): void {
    this.ms.set(part, (this.ms.get(part) ?? 0) + ms);
  }
}
