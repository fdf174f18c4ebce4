/**
 * Document ingestion benchmark, end to end over HTTP (upload → status ready), with the
 * server, its run engine and the bench client in one process:
 *   - a generated 200-page text PDF (45 lines a page): pages/s per document, cold (first
 *     upload starts the PDF parser children) and warm;
 *   - the 21 real PDFs in ../shared/corpus/pdfs-real one after another (upload, wait for
 *     ready, next), and all 21 uploaded at once: pages/s;
 *   - where the time goes for the 200-page PDF: page count at upload (the 202) vs the
 *     ingestion run (text extraction, chunking, embedding, indexing).
 * Target: ≥ 30 pages/s.
 *
 *   bun scripts/bench/ingest.ts [--rounds 3]
 * Env REGKB_EMBEDDER / REGKB_INGEST_CONCURRENCY / REGKB_PDF_PARSERS apply as in the server.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { backgroundServices } from "../../src/background";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { startServer } from "../../src/server";
import { policyPdf } from "../../test/fixtures/pdf/writer";

const { values: args } = parseArgs({ options: { rounds: { type: "string", default: "3" } } });
const rounds = Math.max(1, Math.min(20, Number(args.rounds)));
const REAL_DIR = join(import.meta.dir, "..", "..", "..", "shared", "corpus", "pdfs-real");

const dataDir = mkdtempSync(join(tmpdir(), "regkb-bench-ingest-"));
const config = loadConfig({ ...process.env, REGKB_LOG_LEVEL: "warn" }, { dataDir, port: 0, host: "127.0.0.1" });
const deps = await createDeps(config);
const org = createOrganisation(deps, { name: "Bench", jurisdictions: [] });
const key = createApiKey(deps, { orgId: org.id }).key;
topUp(deps.db, { orgId: org.id, amountPence: 10_000_000, key: ledgerKeys.operatorTopUp(org.id, "bench"), description: "bench credit", nowMs: Date.now() });
const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: backgroundServices(deps) });

async function upload(bytes: Uint8Array, filename: string): Promise<{ id: string; pages: number }> {
  const form = new FormData();
  form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], filename, { type: "application/pdf" }));
  const res = await fetch(`${server.url}/v1/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
  if (res.status !== 202) throw new Error(`POST /v1/documents ${filename} → ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; pages: number };
}
const statusOf = (id: string) => deps.db.query<{ status: string }, [string]>("SELECT status FROM documents WHERE id = ?").get(id)!.status;
async function untilReady(ids: string[]): Promise<void> {
  while (ids.some((id) => statusOf(id) === "processing")) await Bun.sleep(2);
  const failed = ids.filter((id) => statusOf(id) !== "ready");
  if (failed.length > 0) throw new Error(`${failed.length} documents did not become ready`);
}
const rate = (pages: number, ms: number) => `${((pages * 1000) / ms).toFixed(1)} pages/s`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

console.log(`embedder ${config.embedder.kind}, ingest concurrency ${config.ingestConcurrency}, PDF parsers ${config.pdfParsersMax}`);

// 1. The 200-page text PDF.
const big = policyPdf(200);
console.log(`\n200-page text PDF (${(big.byteLength / 1024).toFixed(0)} KiB):`);
for (let round = 0; round <= rounds; round++) {
  const started = performance.now();
  const { id, pages } = await upload(big, `handbook-${round}.pdf`);
  const acceptedMs = performance.now() - started;
  await untilReady([id]);
  const totalMs = performance.now() - started;
  const chunks = deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM search_chunks WHERE document_id = ?").get(id)!.n;
  console.log(
    `  ${round === 0 ? "cold" : `warm ${round}`}: ${pages} pages, ${chunks} passages, 202 after ${secs(acceptedMs)}, ready after ${secs(totalMs)} → ${rate(pages, totalMs)}`,
  );
}

// 2. The real PDFs.
const real = readdirSync(REAL_DIR).filter((f) => f.endsWith(".pdf")).sort();
const realBytes = await Promise.all(real.map((f) => Bun.file(join(REAL_DIR, f)).bytes()));
for (let round = 1; round <= rounds; round++) {
  let pages = 0;
  const started = performance.now();
  for (const [i, file] of real.entries()) {
    const doc = await upload(realBytes[i]!, file);
    pages += doc.pages;
    await untilReady([doc.id]);
  }
  const oneByOneMs = performance.now() - started;

  const startedAll = performance.now();
  const docs = [];
  for (const [i, file] of real.entries()) docs.push(await upload(realBytes[i]!, file));
  await untilReady(docs.map((d) => d.id));
  const allMs = performance.now() - startedAll;
  console.log(
    `\nreal PDFs round ${round}: ${real.length} files, ${pages} pages` +
      `\n  one after another (upload → ready, next): ${secs(oneByOneMs)} → ${rate(pages, oneByOneMs)}, ${(oneByOneMs / real.length).toFixed(0)} ms per document` +
      `\n  all uploaded at once:                     ${secs(allMs)} → ${rate(pages, allMs)}`,
  );
}

await server.stop();
deps.pdf.close();
rmSync(dataDir, { recursive: true, force: true });
