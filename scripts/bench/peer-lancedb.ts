/**
 * regkb against LanceDB (@lancedb/lancedb, embedded, in this process) on the same data.
 * Prints figures; asserts nothing (targets live in the issue and docs/benchmarks.md).
 *
 *   bun scripts/bench/peer-lancedb.ts [--passages 100000] [--rounds 6] [--questions 52]
 *       [--index hnsw-sq|ivf-pq|none] [--ef 200] [--refine 5] [--partitions N] [--nprobes N]
 *
 * The corpus is corpus.ts's (the one search.ts measures). Its shared passages, with the very
 * vectors, texts and jurisdiction tags regkb stored, are loaded into LanceDB: a full-text
 * index on heading and text each (searched together, heading boosted 4× as regkb weighs
 * it), a bitmap index on the jurisdiction, and a cosine vector index. A LanceDB hybrid
 * search is its vector query and its full-text query run concurrently (limit topK each,
 * filtered by jurisdiction unless every one is wanted), fused by reciprocal rank, as
 * LanceDB's own hybrid query does; regkb's is searchKnowledgeBase (expansion and the
 * learned ranker included). Both embed the query with regkb's default embedder.
 *
 * After a warm-up, rounds of the questions alternate query by query between the systems
 * (which goes first alternates too), with all 52 jurisdictions and with 8. Each system's
 * vector recall@10 is measured against exact cosine search over the same filter, two ways:
 * by passage id, and as ann-benchmarks counts it (a result is right if it is as near as the
 * exact 10th). A third of the recombined corpus's vectors are copies of another, so exact
 * ties at the 10th place are common, and by id a system is marked wrong for returning an
 * equally near copy that exact search happened to order after the 10th.
 * LanceDB's files go into a temporary folder, removed afterwards.
 */
import { rmSync } from "node:fs";
import { dot } from "../../src/search/embedder/vector";
import { floatsOfBlob } from "../../src/search/sql";
import { searchKnowledgeBase } from "../../src/search/service";
import { resolveSearchScope, scopesOfSearch } from "../../src/search/scopes";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { exactVectorSearch } from "../../src/search/vector-knn";
import { vectorCandidates } from "../../src/search/vector-leg";
import { chunkVectors } from "../../src/search/vector-store";
import { closeBenchCorpus, eightJurisdictions, flag, fmt, growBenchCorpusTo, openBenchCorpus, percentile, QUERIES, tempDir } from "./corpus";

// LanceDB sizes its CPU pool from the process's environment at start-up (setting it here is
// too late); with 2 threads, on 2 cores, its full-text index build never finishes. So the
// benchmark runs itself again with 3 unless told otherwise.
if (process.env.LANCE_CPU_THREADS === undefined) {
  // LANCEDB_LOG: its scanner warns about a deprecation on every query otherwise.
  const env = { ...process.env, LANCE_CPU_THREADS: "3", LANCEDB_LOG: process.env.LANCEDB_LOG ?? "error" };
  const child = Bun.spawn([process.execPath, ...process.argv.slice(1)], { env, stdio: ["inherit", "inherit", "inherit"] });
  process.exit(await child.exited);
}
const lancedb = await import("@lancedb/lancedb");

const PASSAGES = Number(flag("passages", "100000"));
const ROUNDS = Number(flag("rounds", "6"));
const QUESTIONS = Number(flag("questions", "52"));
const INDEX = flag("index", "hnsw-sq");
const EF = Number(flag("ef", "200"));
const REFINE = Number(flag("refine", "5"));
const PARTITIONS = flag("partitions", "");
/** Partitions LanceDB probes (its default when not given). */
const NPROBES = flag("nprobes", "");
const TOP_K = 10;
const RECALL_QUERIES = 52;
const LOAD_BATCH_ROWS = 10_000;
/** Long enough for a search worker to load 100k int8 vectors on a busy 2-core machine. */
const WORKER_WARM_UP_MS = 10_000;

const questions = Array.from({ length: QUESTIONS }, (_, i) => QUERIES[Math.floor((i * QUERIES.length) / QUESTIONS)]!);

const corpus = await openBenchCorpus("peer");
for (const line of await growBenchCorpusTo(corpus, PASSAGES)) console.log(line);
const { deps } = corpus;
const embed = async (text: string) => (await deps.searchIndex.embedder.embed([text]))[0]!;

// ---------- LanceDB: the same passages ----------

const lanceDir = tempDir("lancedb");
const lance = await lancedb.connect(lanceDir);
interface LanceRow {
  id: number;
  heading: string;
  text: string;
  jurisdiction: string;
  vector: number[];
}
const multiJurisdiction = deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks WHERE owner_org_id IS NULL AND json_array_length(jurisdiction_slugs) <> 1").get()!.n;
if (multiJurisdiction > 0) throw new Error(`${multiJurisdiction} shared passages have other than one jurisdiction: a scalar jurisdiction column cannot hold them`);
let table: Awaited<ReturnType<typeof lance.createTable>> | undefined;
const loadStarted = performance.now();
for (let afterId = 0; ; ) {
  const rows = deps.db
    .query<{ id: number; heading: string; content: string; jurisdiction_slugs: string; embedding: Uint8Array }, [number, number]>(
      `SELECT c.id, c.heading, c.content, c.jurisdiction_slugs, v.embedding FROM search_chunks c JOIN search_chunk_vectors v ON v.chunk_id = c.id
       WHERE c.owner_org_id IS NULL AND c.id > ? ORDER BY c.id LIMIT ?`,
    )
    .all(afterId, LOAD_BATCH_ROWS);
  if (rows.length === 0) break;
  const batch: LanceRow[] = rows.map((r) => ({
    id: r.id,
    heading: r.heading,
    text: r.content,
    jurisdiction: (JSON.parse(r.jurisdiction_slugs) as string[])[0]!,
    vector: Array.from(floatsOfBlob(r.embedding)),
  }));
  if (table === undefined) table = await lance.createTable("passages", batch as unknown as Record<string, unknown>[]);
  else await table.add(batch as unknown as Record<string, unknown>[]);
  afterId = rows.at(-1)!.id;
}
const passages = await table!.countRows();
console.log(`LanceDB: loaded ${passages} passages in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);

const indexStarted = performance.now();
const partitions = PARTITIONS === "" ? {} : { numPartitions: Number(PARTITIONS) };
let indexSetting: string;
if (INDEX === "hnsw-sq") {
  await table!.createIndex("vector", { config: lancedb.Index.hnswSq({ distanceType: "cosine", ...partitions }) });
  indexSetting = `IVF_HNSW_SQ (cosine, ${PARTITIONS || "default"} partitions, m and ef_construction default), query ef ${EF}, refine ${REFINE}, ${NPROBES || "default"} probes`;
} else if (INDEX === "ivf-pq") {
  await table!.createIndex("vector", { config: lancedb.Index.ivfPq({ distanceType: "cosine", numSubVectors: 64, ...partitions }) });
  indexSetting = `IVF_PQ (cosine, 64 sub-vectors, ${PARTITIONS || "default"} partitions), refine ${REFINE}, ${NPROBES || "default"} probes`;
} else {
  indexSetting = "no vector index (exact search)";
}
const vectorIndexSeconds = (performance.now() - indexStarted) / 1000;
const ftsStarted = performance.now();
await table!.createIndex("heading", { config: lancedb.Index.fts() });
await table!.createIndex("text", { config: lancedb.Index.fts() });
await table!.createIndex("jurisdiction", { config: lancedb.Index.bitmap() });
console.log(
  `LanceDB: ${indexSetting}; built in ${vectorIndexSeconds.toFixed(1)} s; full-text (heading, text; default tokenizer) and bitmap (jurisdiction) indexes in ${((performance.now() - ftsStarted) / 1000).toFixed(1)} s (LANCE_CPU_THREADS=${process.env.LANCE_CPU_THREADS})`,
);

function lanceVectorQuery(vector: Float32Array, jurisdictions: readonly string[] | undefined, limit: number) {
  let q = table!.query().nearestTo(vector).distanceType("cosine").limit(limit);
  if (NPROBES !== "") q = q.nprobes(Number(NPROBES));
  if (INDEX === "hnsw-sq") q = q.ef(EF).refineFactor(REFINE);
  else if (INDEX === "ivf-pq") q = q.refineFactor(REFINE);
  else q = q.bypassVectorIndex();
  return jurisdictions === undefined ? q : q.where(jurisdictionFilter(jurisdictions));
}

function jurisdictionFilter(jurisdictions: readonly string[]): string {
  return `jurisdiction IN (${jurisdictions.map((j) => `'${j.replace(/'/g, "''")}'`).join(", ")})`;
}

/** LanceDB's hybrid search: vector and full-text queries at once, fused by reciprocal rank (k = 60). */
async function lanceSearch(query: string, jurisdictions: readonly string[] | undefined): Promise<{ id: number; heading: string; text: string }[]> {
  const vector = await embed(query);
  const fts = table!
    .query()
    .fullTextSearch(new lancedb.MultiMatchQuery(query, ["heading", "text"], { boosts: [4, 1] }))
    .select(["id", "heading", "text"])
    .limit(TOP_K);
  const [byVector, byText] = await Promise.all([
    lanceVectorQuery(vector, jurisdictions, TOP_K).select(["id", "heading", "text"]).toArray(),
    (jurisdictions === undefined ? fts : fts.where(jurisdictionFilter(jurisdictions))).toArray(),
  ]);
  const fused = new Map<number, { row: { id: number; heading: string; text: string }; score: number }>();
  for (const list of [byVector, byText]) {
    list.forEach((row: { id: number; heading: string; text: string }, rank: number) => {
      const seen = fused.get(row.id) ?? { row, score: 0 };
      seen.score += 1 / (60 + rank + 1);
      fused.set(row.id, seen);
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, TOP_K).map((f) => f.row);
}

async function regkbSearch(query: string, jurisdictions: readonly string[]) {
  return searchKnowledgeBase(deps, { orgId: corpus.org.id, query, jurisdictions: [...jurisdictions], topK: TOP_K });
}

// ---------- interleaved rounds ----------

const all = corpus.org.jurisdictions;
const eight = eightJurisdictions(corpus);

async function timed(run: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await run();
  return performance.now() - started;
}

function summary(ms: number[]): { p50: number; p95: number; p99: number; qps: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99), qps: 1000 / (ms.reduce((a, b) => a + b, 0) / ms.length) };
}

interface Recall {
  /** The share of the exact top 10's passage ids returned. */
  byId: number;
  /** ann-benchmarks' recall: the share of returned rows as near as the exact 10th. */
  byDistance: number;
}

async function vectorRecall(jurisdictions: readonly string[]): Promise<{ regkb: Recall; lance: Recall }> {
  const scope = resolveSearchScope(deps.searchIndex.db, corpus.org.id, jurisdictions);
  const scopes = scopesOfSearch(corpus.org.id, jurisdictions);
  const shortlist = Math.max(DEFAULT_SEARCH_TUNING.vectorShortlist, 2 * TOP_K);
  const regkb = { byId: 0, byDistance: 0 };
  const lanceSum = { byId: 0, byDistance: 0 };
  const recallQuestions = QUERIES.slice(0, RECALL_QUERIES);
  for (const query of recallQuestions) {
    const vector = await embed(query);
    const exact = exactVectorSearch(deps.searchIndex.db, vector, scopes, TOP_K);
    const mine = vectorCandidates(deps.searchIndex, { queryVector: vector, orgId: corpus.org.id, scope, shortlist, limit: TOP_K, probes: DEFAULT_SEARCH_TUNING.vectorProbes });
    const theirs = (await lanceVectorQuery(vector, jurisdictions.length === all.length ? undefined : jurisdictions, TOP_K).select(["id"]).toArray()) as { id: number }[];
    for (const [sum, ids] of [[regkb, mine.map((h) => h.chunkId)], [lanceSum, theirs.map((r) => r.id)]] as const) {
      const recall = recallOf(vector, exact, ids);
      sum.byId += recall.byId;
      sum.byDistance += recall.byDistance;
    }
  }
  const mean = (r: Recall) => ({ byId: r.byId / recallQuestions.length, byDistance: r.byDistance / recallQuestions.length });
  return { regkb: mean(regkb), lance: mean(lanceSum) };
}

/** Within this of the exact 10th's cosine similarity counts as as near (float rounding). */
const SIMILARITY_TIE = 1e-6;

function recallOf(query: Float32Array, exact: readonly { chunkId: number; similarity: number }[], ids: readonly number[]): Recall {
  if (exact.length === 0) return { byId: 1, byDistance: 1 };
  const exactIds = new Set(exact.map((h) => h.chunkId));
  const tenth = exact[exact.length - 1]!.similarity;
  const vectors = chunkVectors(deps.searchIndex.db, ids);
  const asNear = ids.filter((id) => cosine(vectors.get(id)!, query) >= tenth - SIMILARITY_TIE).length;
  return { byId: ids.filter((id) => exactIds.has(id)).length / exact.length, byDistance: Math.min(asNear, exact.length) / exact.length };
}

function cosine(a: Float32Array, b: Float32Array): number {
  return dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));
}

const recallText = (r: Recall) => `${r.byId.toFixed(3)} by id, ${r.byDistance.toFixed(3)} by distance`;

for (const [label, jurisdictions] of [["all 52 jurisdictions", all], ["8 jurisdictions", eight]] as const) {
  const lanceFilter = label.startsWith("all") ? undefined : jurisdictions;
  for (const q of questions) {
    await regkbSearch(q, jurisdictions);
    await lanceSearch(q, lanceFilter);
  }
  // The search workers started at the warm-up's first search; they load their in-memory vectors between searches.
  if (label.startsWith("all")) await Bun.sleep(WORKER_WARM_UP_MS);
  const mine: number[] = [];
  const theirs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const [i, q] of questions.entries()) {
      if ((round + i) % 2 === 0) {
        mine.push(await timed(() => regkbSearch(q, jurisdictions)));
        theirs.push(await timed(() => lanceSearch(q, lanceFilter)));
      } else {
        theirs.push(await timed(() => lanceSearch(q, lanceFilter)));
        mine.push(await timed(() => regkbSearch(q, jurisdictions)));
      }
    }
  }
  const recall = await vectorRecall(jurisdictions);
  const a = summary(mine);
  const b = summary(theirs);
  console.log(`${PASSAGES} passages, ${label}, ${ROUNDS} rounds × ${questions.length} questions interleaved, topK ${TOP_K}, query embedding included:`);
  console.log(`  regkb   p50 ${fmt(a.p50)} / p95 ${fmt(a.p95)} / p99 ${fmt(a.p99)} ms, ${a.qps.toFixed(0)} q/s one client, vector recall@10 ${recallText(recall.regkb)}`);
  console.log(`  LanceDB p50 ${fmt(b.p50)} / p95 ${fmt(b.p95)} / p99 ${fmt(b.p99)} ms, ${b.qps.toFixed(0)} q/s one client, vector recall@10 ${recallText(recall.lance)}`);
  console.log(`  regkb / LanceDB: p50 ${(a.p50 / b.p50).toFixed(2)}×, p95 ${(a.p95 / b.p95).toFixed(2)}×, p99 ${(a.p99 / b.p99).toFixed(2)}×`);
}

lance.close();
rmSync(lanceDir, { recursive: true, force: true });
await closeBenchCorpus(corpus);
