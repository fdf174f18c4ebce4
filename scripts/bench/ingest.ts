/**
 * Document ingestion benchmark, end to end over HTTP (upload → status ready), with the
 * server, its run engine and the bench client in one process:
 *   - the 21 real PDFs in ../shared/corpus/pdfs-real from a cold start (each round a new
 *     server over a new data folder: no parser child running yet), one after another
 *     (upload, wait for ready, next) and all uploaded at once: pages/s (target ≥ 30);
 *   - the same server again, warm;
 *   - where the time goes for those 21 PDFs, stage by stage (ingest-stages.ts);
 *   - a generated 200-page text PDF (45 lines a page): pages/s, cold and warm.
 *
 *   bun scripts/bench/ingest.ts [--rounds 3]
 * Env REGKB_EMBEDDER / REGKB_INGEST_CONCURRENCY / REGKB_PDF_PARSERS apply as in the server.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { backgroundServices } from "../../src/background";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { loadConfig, type Config } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { maintainSearchIndex } from "../../src/search/maintenance";
import { startServer } from "../../src/server";
import { policyPdf } from "../../test/fixtures/pdf/writer";
import { measureStages } from "./ingest-stages";

const { values: args } = parseArgs({ options: { rounds: { type: "string", default: "3" } } });
const rounds = Math.max(1, Math.min(20, Number(args.rounds)));
const REAL_DIR = join(import.meta.dir, "..", "..", "..", "shared", "corpus", "pdfs-real");

interface Bench {
  config: Config;
  deps: Deps;
  orgId: string;
  /** startServer: listening, background services started (the warm parser children ready). */
  serverStartMs: number;
  upload(bytes: Uint8Array, filename: string): Promise<{ id: string; pages: number }>;
  untilReady(ids: string[]): Promise<void>;
  stop(): Promise<void>;
}

/** A new server over a new data folder, as `regkb serve` starts it: nothing warm. */
async function startBench(): Promise<Bench> {
  const dataDir = mkdtempSync(join(tmpdir(), "regkb-bench-ingest-"));
  const config = loadConfig({ ...process.env, REGKB_LOG_LEVEL: "warn", REGKB_SANDBOX_POOL_SIZE: "0" }, { dataDir, port: 0, host: "127.0.0.1" });
  const deps = await createDeps(config);
  await maintainSearchIndex(deps);
  const org = createOrganisation(deps, { name: "Bench", jurisdictions: [] });
  const key = createApiKey(deps, { orgId: org.id }).key;
  topUp(deps.db, { orgId: org.id, amountPence: 10_000_000, key: ledgerKeys.operatorTopUp(org.id, "bench"), description: "bench credit", nowMs: Date.now() });
  const startedMs = performance.now();
  const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: backgroundServices(deps) });
  const serverStartMs = performance.now() - startedMs;
  const statusOf = (id: string) => deps.db.query<{ status: string }, [string]>("SELECT status FROM documents WHERE id = ?").get(id)!.status;
  return {
    config,
    deps,
    orgId: org.id,
    serverStartMs,
    async upload(bytes, filename) {
      const form = new FormData();
      form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], filename, { type: "application/pdf" }));
      const res = await fetch(`${server.url}/v1/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
      if (res.status !== 202) throw new Error(`POST /v1/documents ${filename} → ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string; pages: number };
    },
    async untilReady(ids) {
      while (ids.some((id) => statusOf(id) === "processing")) await Bun.sleep(2);
      const failed = ids.filter((id) => statusOf(id) !== "ready");
      if (failed.length > 0) throw new Error(`${failed.length} documents did not become ready`);
    },
    async stop() {
      await server.stop();
      deps.pdf.close();
      await deps.vectorSearchPool?.close();
      deps.db.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const rate = (pages: number, ms: number) => `${((pages * 1000) / ms).toFixed(1)} pages/s`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const real = readdirSync(REAL_DIR)
  .filter((f) => f.endsWith(".pdf"))
  .sort();
const realBytes = await Promise.all(real.map((f) => Bun.file(join(REAL_DIR, f)).bytes()));

/**
 * CPU time of this process and its PDF children, in ms. Load-independent where wall time is
 * not (other jobs share the 2 cores): one document at a time, the path is sequential, so on
 * an idle machine the wall time would be about this (less what JIT threads ran beside it).
 */
function cpuMs(): number {
  const own = process.cpuUsage();
  let ms = (own.user + own.system) / 1000;
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== process.pid) continue;
      ms += ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
    } catch {
      // Exited while we looked.
    }
  }
  return ms;
}
const CLOCK_TICKS_PER_S = 100;

/** `uploadMs`: the POSTs until their 202s (page count, charge, file); the rest is the ingestion runs until ready. */
async function oneByOne(bench: Bench): Promise<{ pages: number; ms: number; uploadMs: number; cpuMs: number }> {
  let pages = 0;
  let uploadMs = 0;
  const cpuStartMs = cpuMs();
  const started = performance.now();
  for (const [i, file] of real.entries()) {
    const posted = performance.now();
    const doc = await bench.upload(realBytes[i]!, file);
    uploadMs += performance.now() - posted;
    pages += doc.pages;
    await bench.untilReady([doc.id]);
  }
  return { pages, ms: performance.now() - started, uploadMs, cpuMs: cpuMs() - cpuStartMs };
}

function perDocument(run: { pages: number; ms: number; uploadMs: number; cpuMs: number }): string {
  const ms = (total: number) => (total / real.length).toFixed(0);
  return (
    `${ms(run.ms)} ms per document (upload → 202 ${ms(run.uploadMs)} ms, 202 → ready ${ms(run.ms - run.uploadMs)} ms); ` +
    `CPU ${secs(run.cpuMs)} (this process and its PDF children) → ${rate(run.pages, run.cpuMs)} of CPU`
  );
}

async function allAtOnce(bench: Bench): Promise<{ pages: number; ms: number }> {
  const started = performance.now();
  const docs = await Promise.all(real.map((file, i) => bench.upload(realBytes[i]!, file)));
  await bench.untilReady(docs.map((d) => d.id));
  return { pages: docs.reduce((n, d) => n + d.pages, 0), ms: performance.now() - started };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
{
  const probe = await startBench();
  console.log(
    `embedder ${probe.config.embedder.kind}, ingest concurrency ${probe.config.ingestConcurrency}, PDF parsers ${probe.config.pdfParsersMax}; load ${load()}`,
  );
  await probe.stop();
}

// 1. The real PDFs from a cold start, then warm on the same server.
for (let round = 1; round <= rounds; round++) {
  let bench = await startBench();
  const serverStartMs = bench.serverStartMs;
  const cold = await oneByOne(bench);
  const warm = await oneByOne(bench);
  await bench.stop();
  bench = await startBench();
  const coldAll = await allAtOnce(bench);
  const warmAll = await allAtOnce(bench);
  await bench.stop();
  console.log(
    `\nreal PDFs round ${round}: ${real.length} files, ${cold.pages} pages (load ${load()}); server start ${serverStartMs.toFixed(0)} ms (${bench.config.pdfParsersWarm} warm parser children)` +
      `\n  one after another, cold: ${secs(cold.ms)} → ${rate(cold.pages, cold.ms)}, ${perDocument(cold)}` +
      `\n  one after another, warm: ${secs(warm.ms)} → ${rate(warm.pages, warm.ms)}, ${perDocument(warm)}` +
      `\n  all at once, cold:       ${secs(coldAll.ms)} → ${rate(coldAll.pages, coldAll.ms)}` +
      `\n  all at once, warm:       ${secs(warmAll.ms)} → ${rate(warmAll.pages, warmAll.ms)}`,
  );
}

// 2. Where the time goes.
{
  const bench = await startBench();
  console.log(`\nwhere the time goes, the ${real.length} real PDFs one after another (sums; load ${load()}):`);
  const stages = await measureStages(bench.deps, bench.orgId, real.map((file, i) => ({ file, bytes: realBytes[i]! })));
  for (const line of stages) console.log(`  ${line}`);
  await bench.stop();
}

// 3. The 200-page text PDF.
{
  const bench = await startBench();
  const big = policyPdf(200);
  console.log(`\n200-page text PDF (${(big.byteLength / 1024).toFixed(0)} KiB):`);
  for (let round = 0; round <= rounds; round++) {
    const started = performance.now();
    const { id, pages } = await bench.upload(big, `handbook-${round}.pdf`);
    const acceptedMs = performance.now() - started;
    await bench.untilReady([id]);
    const totalMs = performance.now() - started;
    console.log(
      `  ${round === 0 ? "cold" : `warm ${round}`}: ${pages} pages, 202 after ${secs(acceptedMs)}, ready after ${secs(totalMs)} → ${rate(pages, totalMs)}`,
    );
  }
  await bench.stop();
}
