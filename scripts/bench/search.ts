/**
 * Search benchmark. Prints figures; asserts nothing (targets live in the issue/README).
 *
 *   bun scripts/bench/search.ts [--sizes 10000,100000] [--vectors 1000000] [--queries 200]
 *                               [--probes 4,8,16,32] [--shortlist 50]
 *
 * 1. Sample-corpus import into an empty database: seconds and passages/s.
 * 2. Real-ish corpora of 10k and 100k passages: the 812 real passages recombined (sentences
 *    of two passages of the same jurisdiction interleaved), indexed with the real default
 *    embedder, so BM25, vectors and partitions behave like the real thing. p50/p95 of
 *    searchKnowledgeBase over the judged questions (query embedding included, all 52
 *    jurisdictions, the vector half on the default search worker), and requests/s over
 *    HTTP with 4 concurrent clients.
 *    Also the vector search alone (all probe counts once the corpus is clustered): p50/p95
 *    and recall@10 against exact search.
 * 3. 1M synthetic vectors (mixtures of real passage embeddings plus noise, so they keep the
 *    real embeddings' anisotropy that quantization has to cope with): p50/p95 of the
 *    vector search (int8 shortlist + float re-score) and its recall@10 against exact
 *    search, scanning everything, then clustered (training time) at several probe counts.
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { loadConfig } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { createLogger } from "../../src/log";
import { openDatabase } from "../../src/db/open";
import { importSampleCorpus, loadSampleCorpus } from "../../src/search/corpus/import";
import type { CorpusPassage } from "../../src/search/corpus/passages";
import { createEmbedder } from "../../src/search/embedder/index";
import { l2Normalise } from "../../src/search/embedder/vector";
import { indexDocument } from "../../src/search/indexing";
import { IVF_VECTORS_MIN, maintainSearchIndex } from "../../src/search/maintenance";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { seededRandom as random } from "../../src/search/ivf";
import { sharedVectorCount, UNCLUSTERED } from "../../src/search/ivf-store";
import { SearchIndex } from "../../src/search/search-index";
import { exactVectorSearch, vectorSearch } from "../../src/search/vector-knn";
import { SHARED_OWNER, VECTOR_TABLE } from "../../src/search/vector-store";
import { startServer } from "../../src/server";
import questionsFile from "../../test/search-quality/questions.json";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}
const SIZES = flag("sizes", "10000,100000").split(",").map(Number);
const VECTORS = Number(flag("vectors", "1000000"));
const QUERY_COUNT = Number(flag("queries", "200"));
const CLIENTS = 4;
const QUERIES = questionsFile.questions.map((q) => q.query);
const PROBES = flag("probes", "4,8,16,32").split(",").map(Number);
const SHORTLIST = Number(flag("shortlist", String(DEFAULT_SEARCH_TUNING.vectorShortlist)));

/** Maintenance of an index built here (the static embedder), as `regkb corpus import` runs it. */
function maintain(searchIndex: SearchIndex) {
  return maintainSearchIndex({ searchIndex, config: { embedder: { kind: "static" } }, log: createLogger("silent") });
}

function percentile(sortedMs: number[], p: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor((p / 100) * sortedMs.length))]!;
}

function fmt(ms: number): string {
  return ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
}

function tempDir(name: string): string {
  const dir = join(tmpdir(), `regkb-bench-${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/**
 * Vector search alone over every shared jurisdiction: p50/p95 (query embedding included)
 * and recall@10 against exact search, at one probe count.
 */
/** Exact answers are computed once per query and reused for every probe count (they cost seconds each at 1M). */
const exactAnswers = new Map<string, Set<number>>();

async function vectorFigures(index: SearchIndex, slugs: string[], probes: number): Promise<string> {
  const { db, embedder } = index;
  const shortlist = SHORTLIST;
  const latencies: number[] = [];
  let recallSum = 0;
  const recallQueries = Math.min(20, QUERY_COUNT);
  // The same file grows from one corpus size to the next: its size is part of the key.
  const corpusKey = `${db.filename}|${sharedVectorCount(db)}`;
  for (let i = 0; i < QUERY_COUNT; i++) {
    const t0 = performance.now();
    const q = (await embedder.embed([QUERIES[i % QUERIES.length]!]))[0]!;
    const hits = vectorSearch(db, index.centroids.current(), q, "bench-org", { allShared: true, jurisdictions: slugs, orgScopes: [] }, shortlist, 10, probes);
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

/** A new passage from two of the same jurisdiction: their sentences interleaved, cut to ~the first's length. */
function recombine(a: CorpusPassage, b: CorpusPassage, next: () => number): string {
  const sentences = (p: CorpusPassage) => p.text.split(/(?<=[.;:])\s+/);
  const left = sentences(a);
  const right = sentences(b);
  const out: string[] = [];
  for (let i = 0; out.length < left.length; i++) out.push(next() < 0.6 ? left[i % left.length]! : right[i % right.length]!);
  return out.join(" ");
}

async function grow(deps: Deps, sample: CorpusPassage[], from: number, to: number, seed: number): Promise<void> {
  const next = random(seed);
  const byJurisdiction = new Map<string, CorpusPassage[]>();
  for (const p of sample) byJurisdiction.set(p.jurisdictions[0]!, [...(byJurisdiction.get(p.jurisdictions[0]!) ?? []), p]);
  const DOC_PASSAGES = 500;
  for (let start = from; start < to; start += DOC_PASSAGES) {
    const count = Math.min(DOC_PASSAGES, to - start);
    const base = sample[Math.floor(next() * sample.length)]!;
    const pool = byJurisdiction.get(base.jurisdictions[0]!)!;
    await indexDocument(deps, {
      documentId: `bench:${start}`,
      ownerOrgId: null,
      jurisdictions: base.jurisdictions,
      passages: Array.from({ length: count }, (_, i) => {
        const a = pool[Math.floor(next() * pool.length)]!;
        const b = pool[Math.floor(next() * pool.length)]!;
        return { source: a.source, citationPath: `${a.citationPath} [bench ${start + i}]`, heading: a.heading, text: recombine(a, b, next), position: i };
      }),
    });
    if (((start + count) % 10_000) === 0) process.stdout.write(`\r  indexed ${start + count}/${to}`);
  }
  process.stdout.write("\n");
}

async function benchCorpora(): Promise<void> {
  const dir = tempDir("corpus");
  const config = loadConfig({ REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0" }, { dataDir: dir, port: 0, host: "127.0.0.1" });
  const deps = await createDeps(config);
  const sample = (await loadSampleCorpus()).passages;
  await maintainSearchIndex(deps);
  await importSampleCorpus(deps);
  const org = createOrganisation(deps, { name: "Bench", jurisdictions: deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug) });
  recordOperatorTopUp(deps, { orgId: org.id, amountPence: 100_000_000, reference: "bench" });
  const key = createApiKey(deps, { orgId: org.id }).key;
  const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: [] });
  let size = sample.length;
  for (const target of SIZES) {
    const started = performance.now();
    await grow(deps, sample, size, target, target);
    const seconds = (performance.now() - started) / 1000;
    console.log(`corpus ${target}: indexed ${target - size} passages in ${seconds.toFixed(1)} s (${Math.round((target - size) / seconds)} passages/s)`);
    // As after `regkb corpus import`: a corpus that grew enough is clustered.
    const maintenanceStarted = performance.now();
    const { clustered } = await maintainSearchIndex(deps);
    if (clustered !== undefined) {
      console.log(`corpus ${target}: clustered ${clustered.vectors} vectors into ${clustered.clusters} clusters in ${((performance.now() - maintenanceStarted) / 1000).toFixed(1)} s`);
    }
    size = target;
    deps.db.exec("PRAGMA optimize");
    // Building the corpus leaves hundreds of MB of garbage a serving process would not have;
    // collecting it now keeps its pauses out of the search figures.
    Bun.gc(true);

    const latencies: number[] = [];
    for (let i = 0; i < QUERY_COUNT; i++) {
      const t = performance.now();
      await searchKnowledgeBase(deps, { orgId: org.id, query: QUERIES[i % QUERIES.length]!, jurisdictions: org.jurisdictions, topK: 10 });
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);

    let sent = 0;
    const httpStarted = performance.now();
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = c; i < QUERY_COUNT; i += CLIENTS) {
          const res = await fetch(`${server.url}/v1/search`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ query: QUERIES[i % QUERIES.length], topK: 10 }),
          });
          if (res.status !== 200) throw new Error(`search returned ${res.status}: ${await res.text()}`);
          await res.arrayBuffer();
          sent++;
        }
      }),
    );
    const rps = sent / ((performance.now() - httpStarted) / 1000);
    console.log(
      `corpus ${target}: searchKnowledgeBase p50 ${fmt(percentile(latencies, 50))} ms, p95 ${fmt(percentile(latencies, 95))} ms (${QUERY_COUNT} queries, embedding included); ` +
        `HTTP ${CLIENTS} clients ${rps.toFixed(0)} req/s`,
    );
    const clusters = deps.searchIndex.centroids.current()?.count;
    const sharedSlugs = deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
    if (clusters === undefined) {
      console.log(`corpus ${target}: vector search (flat scan) ${await vectorFigures(deps.searchIndex, sharedSlugs, 0)}`);
    } else {
      for (const probes of PROBES) {
        console.log(`corpus ${target}: vector search, ${probes}/${clusters} clusters ${await vectorFigures(deps.searchIndex, sharedSlugs, probes)}`);
      }
    }
  }
  await server.stop();
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
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
    for (const probes of PROBES) {
      console.log(`vectors ${VECTORS}: ${probes}/${trained.clusters} clusters ${await vectorFigures(deps.searchIndex, slugs, probes)}`);
    }
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });
}

await benchSampleImport();
await benchCorpora();
if (VECTORS > 0) await benchVectors();
