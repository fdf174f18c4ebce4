/**
 * Search benchmark. Prints figures; asserts nothing (targets live in the issue/README).
 *
 *   bun scripts/bench/search.ts [--sizes 10000,100000] [--vectors 1000000] [--queries 200]
 *                               [--probes 4,8,16,32] [--shortlist 50] [--search-workers N]
 *                               [--data DIR] [--skip-import] [--skip-corpora] [--cpu-only]
 *
 * --data DIR keeps the corpus in DIR (built on the first run, reused after); --search-workers
 * sets REGKB_SEARCH_WORKERS; --skip-import leaves out part 1, --skip-corpora part 2;
 * --cpu-only runs only part 2's CPU of whole searches (a minute: to compare two versions).
 *
 * 1. Sample-corpus import into an empty database: seconds and passages/s.
 * 2. Real-ish corpora of 10k and 100k passages (corpus.ts builds them). p50/p95 of
 *    searchKnowledgeBase over the judged questions (warmed up: workers' vectors and this
 *    thread's BM25 term index loaded) (query embedding included, the vector
 *    half on the default search worker), with all 52 jurisdictions and with 8, and of each
 *    part of it (SearchTrace: embedding, query analysis and expansion, scope resolution,
 *    BM25, the wait for the vector half, fusion, stage two, materialisation, the reply's
 *    JSON; and the vector half's own time on the worker and its round trip), with the CPU
 *    time of this thread in each part; the CPU of whole searches run on one thread as a
 *    search worker runs them, part by part (where each ms of a search's CPU goes); then paid
 *    searches/s over HTTP with 4 concurrent clients, with each synchronous setting, their
 *    latency and the CPU per paid search on each kind of thread (after warm-up rounds until
 *    the rate is steady: two rounds in a row within 10%, 8 to 20 rounds); the
 *    same searches in this process, charged first or not, with the search workers' CPU per
 *    search (what a charge's commit costs them).
 *    Also the vector search alone (all probe counts once the corpus is clustered): p50/p95
 *    and recall@10 against exact search, by vec0's scan and by the search workers' in-memory copy.
 * 3. 1M synthetic vectors (mixtures of real passage embeddings plus noise, so they keep the
 *    real embeddings' anisotropy that quantization has to cope with): p50/p95 of the
 *    vector search (int8 shortlist + float re-score) and its recall@10 against exact
 *    search, scanning everything, then clustered (training time) at several probe counts,
 *    by vec0's scan and by a search worker's in-memory copy.
 */
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { importSampleCorpus, loadSampleCorpus } from "../../src/search/corpus/import";
import { createEmbedder } from "../../src/search/embedder/index";
import { l2Normalise } from "../../src/search/embedder/vector";
import { seededRandom as random } from "../../src/search/ivf";
import { sharedVectorCount, UNCLUSTERED } from "../../src/search/ivf-store";
import { IVF_VECTORS_MIN, maintainSearchIndex } from "../../src/search/maintenance";
import { SearchIndex } from "../../src/search/search-index";
import { performSearch } from "../../src/search/perform";
import { searchKnowledgeBase } from "../../src/search/service";
import { SEARCH_PARTS, SearchTrace, threadCpuMs, type SearchPart } from "../../src/search/trace";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { exactVectorSearch, vectorSearch } from "../../src/search/vector-knn";
import { VectorMemory } from "../../src/search/vector-memory";
import { SHARED_OWNER, VECTOR_TABLE } from "../../src/search/vector-store";
import { startServer } from "../../src/server";
import { closeBenchCorpus, eightJurisdictions, flag, fmt, growBenchCorpusTo, openBenchCorpus, p50p95, percentile, QUERIES, tempDir, type BenchCorpus } from "./corpus";

const SIZES = flag("sizes", "10000,100000").split(",").map(Number);
const VECTORS = Number(flag("vectors", "1000000"));
const QUERY_COUNT = Number(flag("queries", "200"));
const CLIENTS = 4;
/** HTTP warm-up rounds (see benchCorpora): at least the first, at most the second, until two in a row are within HTTP_STEADY_SHARE. */
const HTTP_WARM_UP_ROUNDS = [8, 20] as const;
const HTTP_STEADY_SHARE = 0.1;
const PROBES = flag("probes", "4,8,16,32").split(",").map(Number);
/** Long enough for a search worker to load 100k int8 vectors on a busy 2-core machine. */
const WARM_UP_MS = 10_000;
const CPU_ONLY = process.argv.includes("--cpu-only");
const SHORTLIST = Number(flag("shortlist", String(DEFAULT_SEARCH_TUNING.vectorShortlist)));

/** Maintenance of an index built here (the static embedder), as `regkb corpus import` runs it. */
function maintain(searchIndex: SearchIndex) {
  return maintainSearchIndex({ searchIndex, config: { embedder: { kind: "static" } }, log: createLogger("silent") });
}

/** Exact answers are computed once per query and reused for every probe count (they cost seconds each at 1M). */
const exactAnswers = new Map<string, Set<number>>();

/**
 * Vector search alone over every shared jurisdiction: p50/p95 (query embedding included)
 * and recall@10 against exact search, at one probe count.
 */
async function vectorFigures(index: SearchIndex, slugs: string[], probes: number, allShared = true, memory?: VectorMemory): Promise<string> {
  const { db, embedder } = index;
  const shortlist = SHORTLIST;
  const latencies: number[] = [];
  let recallSum = 0;
  const recallQueries = Math.min(20, QUERY_COUNT);
  // The same file grows from one corpus size to the next: its size is part of the key.
  const corpusKey = `${db.filename}|${sharedVectorCount(db)}|${slugs.join(",")}`;
  for (let i = 0; i < QUERY_COUNT; i++) {
    const t0 = performance.now();
    const q = (await embedder.embed([QUERIES[i % QUERIES.length]!]))[0]!;
    const hits = vectorSearch(db, index.centroids.current(), q, "bench-org", { allShared, jurisdictions: slugs, orgScopes: [] }, shortlist, 10, probes, memory?.shortlister());
    latencies.push(performance.now() - t0);
    if (i < recallQueries) {
      const cacheKey = `${corpusKey}|${i}`;
      const exact = exactAnswers.get(cacheKey) ?? new Set(exactVectorSearch(db, q, slugs, 10).map((h) => h.chunkId));
      exactAnswers.set(cacheKey, exact);
      recallSum += hits.filter((h) => exact.has(h.chunkId)).length / Math.max(1, exact.size);
    }
  }
  latencies.sort((a, b) => a - b);
  return `p50 ${fmt(percentile(latencies, 50))} ms, p95 ${fmt(percentile(latencies, 95))} ms, recall@10 vs exact ${(recallSum / recallQueries).toFixed(3)} (${recallQueries} queries)`;
}

// ---------- 1. sample import ----------

async function benchSampleImport(): Promise<void> {
  const dir = tempDir("sample");
  const db = await openDatabase(dir);
  const embedder = await createEmbedder({ kind: "static", timeoutMs: 30_000, batchTextsMax: 64 });
  const searchIndex = new SearchIndex(db, embedder);
  await maintain(searchIndex);
  const s = await importSampleCorpus({ searchIndex });
  console.log(`sample import: ${s.chunksAdded} passages in ${(s.elapsedMs / 1000).toFixed(2)} s = ${Math.round(s.chunksAdded / (s.elapsedMs / 1000))} passages/s (embedder ${embedder.id})`);
  const again = await importSampleCorpus({ searchIndex });
  console.log(`sample re-import (unchanged): ${(again.elapsedMs / 1000).toFixed(2)} s`);
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

// ---------- 2. real-ish corpora ----------

/**
 * searchKnowledgeBase over the judged questions, one at a time, each traced: the total and
 * each part's p50/p95 wall time (parts on the request's thread add up to the total; the
 * worker's own time and the round trip to it overlap them), plus the reply's JSON; and the
 * mean CPU time of this thread in each part (the vector half's CPU is the worker's).
 */
async function latencyBreakdown(corpus: BenchCorpus, jurisdictions: string[]): Promise<string[]> {
  const totals: number[] = [];
  const cpuTotals: number[] = [];
  const parts = new Map<SearchPart | "json" | "unaccounted", number[]>();
  const cpuParts = new Map<SearchPart | "json", number[]>();
  const record = <K>(into: Map<K, number[]>, part: K, ms: number) => into.set(part, [...(into.get(part) ?? []), ms]);
  for (let i = 0; i < QUERY_COUNT; i++) {
    const trace = new SearchTrace();
    const t = performance.now();
    const cpuStarted = threadCpuMs();
    const results = await searchKnowledgeBase(corpus.deps, { orgId: corpus.org.id, query: QUERIES[i % QUERIES.length]!, jurisdictions, topK: 10 }, DEFAULT_SEARCH_TUNING, "hybrid", trace);
    const searchedMs = performance.now() - t;
    const jsonStarted = performance.now();
    const jsonCpuStarted = threadCpuMs();
    JSON.stringify({ requestId: "bench", results, creditsChargedPence: 1, availablePence: 1 });
    const jsonMs = performance.now() - jsonStarted;
    totals.push(searchedMs + jsonMs);
    cpuTotals.push(threadCpuMs() - cpuStarted);
    record(cpuParts, "json", threadCpuMs() - jsonCpuStarted);
    let laps = 0;
    for (const part of SEARCH_PARTS) {
      const ms = trace.ms.get(part) ?? 0;
      record(parts, part, ms);
      if (trace.cpuMs.has(part)) record(cpuParts, part, trace.cpuMs.get(part)!);
      if (part !== "vectorInWorker" && part !== "vectorRoundTrip") laps += ms;
    }
    record(parts, "json", jsonMs);
    record(parts, "unaccounted", searchedMs - laps);
  }
  return [
    `total ${p50p95(totals)} ms (p50 / p95), mean ${fmt(mean(totals))}; CPU of this thread per search, mean ${fmt(mean(cpuTotals))} ms`,
    ...[...parts].map(([part, ms]) => {
      const cpu = cpuParts.get(part as SearchPart | "json");
      return `  ${part.padEnd(16)} ${p50p95(ms).padStart(13)}   mean ${fmt(mean(ms)).padStart(5)}${cpu === undefined ? "" : `   CPU mean ${fmt(mean(cpu))}`}`;
    }),
  ];
}

const mean = (xs: readonly number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);

/**
 * Where the CPU of a whole search goes, as a search worker runs it (the way paid searches
 * run under concurrency): on this thread, with its own in-memory vectors, caches and BM25
 * term index, warmed up on the questions; CPU time of this thread (getrusage, in whole ticks
 * of the kernel's clock: means over many searches are exact, single parts are not).
 */
async function cpuOfWholeSearches(corpus: BenchCorpus, scopes: readonly (readonly [string, readonly string[]])[]): Promise<string[]> {
  const memory = new VectorMemory(corpus.deps.searchIndex.db);
  await memory.load();
  const index = new SearchIndex(corpus.deps.searchIndex.db, corpus.deps.searchIndex.embedder, memory);
  const deps = { searchIndex: index, lexicon: corpus.deps.lexicon };
  const lines: string[] = [];
  for (const [label, jurisdictions] of scopes) {
    const search = (query: string, trace?: SearchTrace) =>
      searchKnowledgeBase(deps, { orgId: corpus.org.id, query, jurisdictions: [...jurisdictions], topK: 10 }, DEFAULT_SEARCH_TUNING, "hybrid", trace);
    // Twice, loading the term index after each pass: it learns its terms from the searches.
    for (let pass = 0; pass < 2; pass++) {
      for (const query of QUERIES) await search(query);
      await index.bm25Terms.load();
    }
    const totals: number[] = [];
    const parts = new Map<SearchPart | "json", number[]>();
    const started = performance.now();
    for (let i = 0; i < QUERY_COUNT; i++) {
      const trace = new SearchTrace();
      const cpuStarted = threadCpuMs();
      const results = await search(QUERIES[i % QUERIES.length]!, trace);
      const jsonStarted = threadCpuMs();
      JSON.stringify({ requestId: "bench", results, creditsChargedPence: 1, availablePence: 1 });
      const ended = threadCpuMs();
      totals.push(ended - cpuStarted);
      for (const [part, ms] of trace.cpuMs) parts.set(part, [...(parts.get(part) ?? []), ms]);
      parts.set("json", [...(parts.get("json") ?? []), ended - jsonStarted]);
    }
    const wallMs = (performance.now() - started) / QUERY_COUNT;
    lines.push(`${label}: CPU per whole search mean ${fmt(mean(totals))} ms (wall ${fmt(wallMs)} ms), by part (mean ms, share):`);
    // Run here, "vectorWait" is the vector half itself.
    const byPart = [...parts].map(([part, ms]) => [part === "vectorWait" ? "vector half" : part, mean(ms)] as const).sort((a, b) => b[1] - a[1]);
    lines.push(`  ${byPart.map(([part, ms]) => `${part} ${fmt(ms)} (${Math.round((100 * ms) / mean(totals))}%)`).join(", ")}`);
  }
  return lines;
}

/** CPU ms so far of each of this process's threads, by name (Linux /proc): the request's thread is named after the process. */
function cpuMsByThread(): Map<string, number> {
  const byName = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended
    }
    const name = Number(tid) === process.pid ? "request thread" : stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")) === "Worker" ? "search workers" : "other threads";
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime + stime, in clock ticks of 10 ms.
    byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10);
  }
  return byName;
}

/**
 * Paid searches/s with CLIENTS concurrent clients (in this process, on the request's thread),
 * their latency, and where the CPU went per paid search: the request's thread (HTTP,
 * authentication, the charge, replies, the clients), the search workers, the rest (JIT, GC).
 */
async function httpThroughput(corpus: BenchCorpus, url: string): Promise<{ perSecond: number; line: string }> {
  const latencies: number[] = [];
  const cpuBefore = cpuMsByThread();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = c; i < QUERY_COUNT; i += CLIENTS) {
        const sent = performance.now();
        const res = await fetch(`${url}/v1/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${corpus.apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ query: QUERIES[i % QUERIES.length], topK: 10 }),
        });
        if (res.status !== 200) throw new Error(`search returned ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const cpu = [...cpuMsByThread()].map(([name, ms]) => [name, (ms - (cpuBefore.get(name) ?? 0)) / latencies.length] as const);
  const totalMs = cpu.reduce((sum, [, ms]) => sum + ms, 0);
  const perSecond = latencies.length / (elapsedMs / 1000);
  const line =
    `${perSecond.toFixed(0)} paid searches/s, latency ${p50p95(latencies)} ms (p50 / p95); ` +
    `CPU per search ${fmt(totalMs)} ms (${cpu.map(([name, ms]) => `${name} ${fmt(ms)}`).join(", ")}), ${((totalMs * latencies.length) / elapsedMs).toFixed(2)} cores busy`;
  return { perSecond, line };
}

/**
 * What a charge's commit costs the search workers: CLIENTS concurrent searches in this
 * process (no HTTP), whole ones on the workers, each charged first as a paid search is
 * (performSearch) or not; searches/s and CPU per search on the workers' threads. Every
 * commit to the database file makes each other connection drop its page cache, so a worker's
 * next search reads its pages again.
 */
async function chargeCost(corpus: BenchCorpus, charged: boolean): Promise<string> {
  const cpuBefore = cpuMsByThread();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = c; i < QUERY_COUNT; i += CLIENTS) {
        const query = QUERIES[i % QUERIES.length]!;
        if (charged) await performSearch(corpus.deps, { orgId: corpus.org.id, query, topK: 10, operationId: `bench-${crypto.randomUUID()}` });
        else await searchKnowledgeBase(corpus.deps, { orgId: corpus.org.id, query, jurisdictions: corpus.org.jurisdictions, topK: 10 });
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  const workersMs = (cpuMsByThread().get("search workers") ?? 0) - (cpuBefore.get("search workers") ?? 0);
  return `${charged ? "charged" : "not charged"}: ${(QUERY_COUNT / (elapsedMs / 1000)).toFixed(0)} searches/s, search workers' CPU per search ${fmt(workersMs / QUERY_COUNT)} ms`;
}

async function benchCorpora(): Promise<void> {
  const corpus = await openBenchCorpus("corpus");
  const { deps } = corpus;
  const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: [] });
  for (const target of SIZES) {
    for (const line of await growBenchCorpusTo(corpus, target)) console.log(line);
    const eight = eightJurisdictions(corpus);
    if (CPU_ONLY) {
      for (const line of await cpuOfWholeSearches(corpus, [["all 52 jurisdictions", corpus.org.jurisdictions], ["8 jurisdictions", eight]])) console.log(`corpus ${target}: ${line}`);
      continue;
    }
    // Warm-up: the search workers start, then load their in-memory vectors (vector-memory.ts)
    // between searches, and this thread its BM25 term index (bm25/term-index.ts).
    const warmStarted = performance.now();
    for (const jurisdictions of [corpus.org.jurisdictions, eight]) {
      for (const query of QUERIES) await searchKnowledgeBase(corpus.deps, { orgId: corpus.org.id, query, jurisdictions, topK: 10 });
    }
    await deps.searchIndex.bm25Terms.load();
    const terms = deps.searchIndex.bm25Terms.size;
    console.log(`corpus ${target}: BM25 term index ${terms.postings} postings, ${(terms.bytes / 1e6).toFixed(1)} MB, loaded within ${((performance.now() - warmStarted) / 1000).toFixed(1)} s of warm-up`);
    await Bun.sleep(Math.max(0, WARM_UP_MS - (performance.now() - warmStarted)));
    for (const [label, jurisdictions] of [["all 52 jurisdictions", corpus.org.jurisdictions], ["8 jurisdictions", eight]] as const) {
      console.log(`corpus ${target}: searchKnowledgeBase, ${label} (${QUERY_COUNT} queries, embedding included), ms by part:`);
      for (const line of await latencyBreakdown(corpus, [...jurisdictions])) console.log(`  ${line}`);
    }
    console.log(`corpus ${target}: whole searches on one thread, as a search worker runs them (${QUERY_COUNT} queries after two warm-up passes):`);
    for (const line of await cpuOfWholeSearches(corpus, [["all 52 jurisdictions", corpus.org.jurisdictions], ["8 jurisdictions", eight]])) console.log(`  ${line}`);
    // Each paid search commits its charge on the request's thread: with `full` (the default) that waits for an fsync.
    // Warm-up rounds, not reported: under concurrency the workers run whole searches, so only
    // now do they fill their own caches and load their BM25 term indexes (between answers).
    let previous = 0;
    for (let round = 1; round <= HTTP_WARM_UP_ROUNDS[1]; round++) {
      const figures = await httpThroughput(corpus, String(server.url));
      console.log(`corpus ${target}: HTTP warm-up round ${round}: ${figures.line}`);
      const steady = Math.abs(figures.perSecond - previous) <= HTTP_STEADY_SHARE * previous;
      previous = figures.perSecond;
      if (round >= HTTP_WARM_UP_ROUNDS[0] && steady) break;
    }
    console.log(`corpus ${target}: HTTP ${CLIENTS} clients (REGKB_SQLITE_SYNCHRONOUS=full): ${(await httpThroughput(corpus, String(server.url))).line}`);
    // Alternating, so that load from elsewhere falls on both alike.
    for (const charged of [false, true, false, true]) console.log(`corpus ${target}: ${CLIENTS} concurrent searches in-process, ${await chargeCost(corpus, charged)}`);
    deps.db.exec("PRAGMA synchronous = NORMAL");
    console.log(`corpus ${target}: HTTP ${CLIENTS} clients (REGKB_SQLITE_SYNCHRONOUS=normal): ${(await httpThroughput(corpus, String(server.url))).line}`);
    deps.db.exec("PRAGMA synchronous = FULL");
    const clusters = deps.searchIndex.centroids.current()?.count;
    const sharedSlugs = deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
    if (clusters === undefined) {
      console.log(`corpus ${target}: vector search (flat scan) ${await vectorFigures(deps.searchIndex, sharedSlugs, 0)}`);
    } else {
      // As a search worker scans them: an in-memory int8 copy (vector-memory.ts) on this thread.
      const memory = new VectorMemory(deps.searchIndex.db);
      const loadStarted = performance.now();
      await memory.load();
      console.log(`corpus ${target}: in-memory vectors ${memory.size.rows} rows, ${(memory.size.bytes / 1e6).toFixed(1)} MB, loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
      for (const probes of PROBES) {
        console.log(`corpus ${target}: vector search, ${probes}/${clusters} clusters ${await vectorFigures(deps.searchIndex, sharedSlugs, probes)}`);
        console.log(`corpus ${target}: vector search, 8 jurisdictions, ${probes}/${clusters} clusters ${await vectorFigures(deps.searchIndex, eightJurisdictions(corpus), probes, false)}`);
        console.log(`corpus ${target}: vector search in memory, ${probes}/${clusters} clusters ${await vectorFigures(deps.searchIndex, sharedSlugs, probes, true, memory)}`);
        console.log(`corpus ${target}: vector search in memory, 8 jurisdictions, ${probes}/${clusters} clusters ${await vectorFigures(deps.searchIndex, eightJurisdictions(corpus), probes, false, memory)}`);
      }
    }
  }
  await server.stop();
  await closeBenchCorpus(corpus);
}

// ---------- 3. 1M synthetic vectors ----------

async function benchVectors(): Promise<void> {
  const dir = tempDir("vectors");
  const db = await openDatabase(dir);
  const embedder = await createEmbedder({ kind: "static", timeoutMs: 30_000, batchTextsMax: 64 });
  const deps = { searchIndex: new SearchIndex(db, embedder) };
  await maintain(deps.searchIndex);
  // Only the vector tables are exercised: no passage rows, so skip the foreign keys to them.
  db.exec("PRAGMA foreign_keys = OFF");
  const sample = (await loadSampleCorpus()).passages;
  const basis = await embedder.embed(sample.map((p) => `${p.heading}\n${p.text}`));
  const slugs = [...new Set(sample.map((p) => p.jurisdictions[0]!))];
  const next = random(7);
  const dims = embedder.dimensions;
  const insertVector = db.query("INSERT INTO search_chunk_vectors (chunk_id, embedding) VALUES (?, ?)");
  const insertScope = db.query("INSERT INTO search_chunk_scopes (vec_rowid, chunk_id, scope) VALUES (?, ?, ?)");
  const insertQuantized = db.query(`INSERT INTO ${VECTOR_TABLE} (rowid, owner, cluster, jurisdiction, embedding_int8) VALUES (?, ?, ?, ?, vec_quantize_int8(?, 'unit'))`);
  const started = performance.now();
  const BATCH = 10_000;
  for (let start = 1; start <= VECTORS; start += BATCH) {
    db.transaction(() => {
      for (let id = start; id < start + BATCH && id <= VECTORS; id++) {
        const i = Math.floor(next() * basis.length);
        const j = Math.floor(next() * basis.length);
        const a = basis[i]!;
        const b = basis[j]!;
        const w = 0.5 + 0.5 * next();
        const v = new Float32Array(dims);
        for (let d = 0; d < dims; d++) v[d] = w * a[d]! + (1 - w) * b[d]! + 0.05 * (next() - 0.5);
        l2Normalise(v);
        const scope = sample[i]!.jurisdictions[0]!;
        insertVector.run(id, v);
        insertScope.run(id, id, scope);
        insertQuantized.run(id, SHARED_OWNER, UNCLUSTERED, scope, v.slice(0, embedder.shortlistDimensions));
      }
    })();
    process.stdout.write(`\r  inserted ${Math.min(VECTORS, start + BATCH - 1)}/${VECTORS}`);
  }
  process.stdout.write("\n");
  console.log(`vectors ${VECTORS}: built in ${((performance.now() - started) / 1000).toFixed(0)} s (${dims}-d, ${slugs.length} jurisdictions)`);

  console.log(`vectors ${VECTORS}: flat scan (int8 shortlist ${SHORTLIST}, float re-score) ${await vectorFigures(deps.searchIndex, slugs, 0)}`);
  if (VECTORS >= IVF_VECTORS_MIN) {
    const trainStarted = performance.now();
    const trained = (await maintain(deps.searchIndex)).clustered!;
    console.log(`vectors ${VECTORS}: clustered into ${trained.clusters} clusters in ${((performance.now() - trainStarted) / 1000).toFixed(1)} s`);
    // As a search worker scans them: its in-memory int8 copy (vector-memory.ts).
    const memory = new VectorMemory(db);
    const loadStarted = performance.now();
    if (!(await memory.load())) throw new Error("the in-memory vector copy did not load");
    console.log(`vectors ${VECTORS}: in-memory copy ${memory.size.rows} rows, ${(memory.size.bytes / 1e6).toFixed(0)} MB, loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
    for (const probes of PROBES) {
      console.log(`vectors ${VECTORS}: ${probes}/${trained.clusters} clusters ${await vectorFigures(deps.searchIndex, slugs, probes)}`);
      console.log(`vectors ${VECTORS}: ${probes}/${trained.clusters} clusters in memory ${await vectorFigures(deps.searchIndex, slugs, probes, true, memory)}`);
    }
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

if (!process.argv.includes("--skip-import")) await benchSampleImport();
if (!process.argv.includes("--skip-corpora")) await benchCorpora();
if (VECTORS > 0) await benchVectors();
