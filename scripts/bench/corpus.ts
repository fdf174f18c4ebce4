/**
 * The benchmarks' search corpus, shared by search.ts and peer-lancedb.ts so both measure the
 * same data: the 812 real passages recombined (sentences of two passages of the same
 * jurisdiction interleaved) up to the wanted size, indexed with the real default embedder,
 * so BM25, vectors and partitions behave like the real thing.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { loadConfig } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { importSampleCorpus, loadSampleCorpus } from "../../src/search/corpus/import";
import type { CorpusPassage } from "../../src/search/corpus/passages";
import { indexDocument } from "../../src/search/indexing";
import { seededRandom as random } from "../../src/search/ivf";
import { maintainSearchIndex } from "../../src/search/maintenance";
import questionsFile from "../../test/search-quality/questions.json";

/** The judged questions of the quality benchmark: the queries every search benchmark sends. */
export const QUERIES = questionsFile.questions.map((q) => q.query);

export function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

export function percentile(sortedMs: readonly number[], p: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.floor((p / 100) * sortedMs.length))]!;
}

export function fmt(ms: number): string {
  return ms < 10 ? ms.toFixed(2) : ms.toFixed(1);
}

/** "p50 x, p95 y" of unsorted latencies (ms). */
export function p50p95(ms: readonly number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  return `${fmt(percentile(sorted, 50))} / ${fmt(percentile(sorted, 95))}`;
}

export function tempDir(name: string): string {
  const dir = join(tmpdir(), `regkb-bench-${name}-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/** A new passage from two of the same jurisdiction: their sentences interleaved, cut to ~the first's length. */
function recombine(a: CorpusPassage, b: CorpusPassage, next: () => number): string {
  const sentences = (p: CorpusPassage) => p.text.split(/(?<=[.;:])\s+/);
  const left = sentences(a);
  const right = sentences(b);
  const out: string[] = [];
  for (let i = 0; out.length < left.length; i++) out.push(next() < 0.6 ? left[i % left.length]! : right[i % right.length]!);
  return out.join(" ");
}

/** Indexes recombined passages from `from` up to `to` (documents of 500), seeded by `seed`. */
export async function growCorpus(deps: Deps, sample: readonly CorpusPassage[], from: number, to: number, seed: number): Promise<void> {
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
    if ((start + count) % 10_000 === 0) process.stdout.write(`\r  indexed ${start + count}/${to}`);
  }
  process.stdout.write("\n");
}

export interface BenchCorpus {
  deps: Deps;
  dir: string;
  sample: CorpusPassage[];
  org: { id: string; jurisdictions: string[] };
  /** An API key of `org`, which holds credit for every search a benchmark sends. */
  apiKey: string;
  /** Passages indexed so far. */
  size: number;
  /** Kept after the benchmark (--data): the next run starts from it. */
  kept: boolean;
}

/**
 * A fresh data directory with the sample corpus and a funded organisation that has every
 * jurisdiction; or, with `--data DIR`, the corpus an earlier run left there (kept afterwards,
 * so repeated runs skip building it).
 */
export async function openBenchCorpus(name: string, env: Record<string, string> = {}): Promise<BenchCorpus> {
  const keptDir = flag("data", "");
  const dir = keptDir === "" ? tempDir(name) : keptDir;
  const saved = join(dir, "bench-corpus.json");
  // --search-workers: REGKB_SEARCH_WORKERS for the benchmark's process (default: the product's default).
  const workers = flag("search-workers", "");
  const config = loadConfig(
    { REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0", ...(workers === "" ? {} : { REGKB_SEARCH_WORKERS: workers }), ...env },
    { dataDir: dir, port: 0, host: "127.0.0.1" },
  );
  const deps = await createDeps(config);
  const sample = (await loadSampleCorpus()).passages;
  await maintainSearchIndex(deps);
  if (existsSync(saved)) {
    const { org, apiKey } = JSON.parse(readFileSync(saved, "utf8")) as Pick<BenchCorpus, "org" | "apiKey">;
    const size = deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM search_chunks").get()!.n;
    return { deps, dir, sample, org, apiKey, size, kept: true };
  }
  await importSampleCorpus(deps);
  const org = createOrganisation(deps, { name: "Bench", jurisdictions: deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug) });
  recordOperatorTopUp(deps, { orgId: org.id, amountPence: 100_000_000, reference: "bench" });
  const apiKey = createApiKey(deps, { orgId: org.id }).key;
  if (keptDir !== "") writeFileSync(saved, JSON.stringify({ org: { id: org.id, jurisdictions: org.jurisdictions }, apiKey }));
  return { deps, dir, sample, org, apiKey, size: sample.length, kept: keptDir !== "" };
}

/**
 * Grows the corpus to `target` passages (seeded by the target, so a size is the same corpus
 * in every benchmark), then runs maintenance as `regkb corpus import` would (clustering a
 * corpus that grew enough). Returns what it did, for the benchmark's output.
 */
export async function growBenchCorpusTo(corpus: BenchCorpus, target: number): Promise<string[]> {
  const lines: string[] = [];
  if (corpus.size >= target) return [`corpus ${target}: ${corpus.size} passages kept in ${corpus.dir}`];
  const started = performance.now();
  await growCorpus(corpus.deps, corpus.sample, corpus.size, target, target);
  const seconds = (performance.now() - started) / 1000;
  lines.push(`corpus ${target}: indexed ${target - corpus.size} passages in ${seconds.toFixed(1)} s (${Math.round((target - corpus.size) / seconds)} passages/s)`);
  const maintenanceStarted = performance.now();
  const { clustered } = await maintainSearchIndex(corpus.deps);
  if (clustered !== undefined) {
    lines.push(`corpus ${target}: clustered ${clustered.vectors} vectors into ${clustered.clusters} clusters in ${((performance.now() - maintenanceStarted) / 1000).toFixed(1)} s`);
  }
  corpus.size = target;
  corpus.deps.db.exec("PRAGMA optimize");
  // Building the corpus leaves hundreds of MB of garbage a serving process would not have;
  // collecting it now keeps its pauses out of the search figures.
  Bun.gc(true);
  return lines;
}

/** The narrower filter the benchmarks compare: the first 8 jurisdictions by slug. */
export function eightJurisdictions(corpus: BenchCorpus): string[] {
  return [...corpus.org.jurisdictions].sort().slice(0, 8);
}

export async function closeBenchCorpus(corpus: BenchCorpus): Promise<void> {
  await corpus.deps.vectorSearchPool?.close();
  corpus.deps.db.close();
  if (!corpus.kept) rmSync(corpus.dir, { recursive: true, force: true });
}
