/**
 * Screening benchmark over the sample corpus (812 passages), with the server, its run
 * engine and the bench client in one process:
 *   - wall time of one 100-keyword screening (POST → completed) and keywords/s
 *     (target ≥ 100 keywords/s with the static embedder);
 *   - event-loop lag and /healthz latency while that screening runs (the run shares the
 *     HTTP thread, so this is what a concurrent client feels);
 *   - runs/s and keywords/s when 20 screenings of 10 keywords are queued at once.
 *
 *   bun scripts/bench/screening.ts [--rounds 3]
 * Env REGKB_EMBEDDER / REGKB_SCREENING_CONCURRENCY apply as in the server. On a busy machine
 * read the CPU ms/keyword figure: wall times include waiting for other processes.
 */
import { rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { backgroundServices } from "../../src/background";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { startServer } from "../../src/server";

const { values: args } = parseArgs({ options: { rounds: { type: "string", default: "3" } } });
const rounds = Math.max(1, Math.min(20, Number(args.rounds)));

const TOPICS = [
  "personal data breach notification", "supervisory authority", "data protection officer", "right to erasure",
  "consent of the data subject", "processing of special categories", "cross-border transfer safeguards",
  "records of processing activities", "home mortgage disclosure", "loan application register", "reportable transaction",
  "security breach notice to residents", "encryption safe harbor", "consumer reporting agency", "attorney general notification",
  "social security number", "biometric identifiers", "data minimisation", "automated decision-making", "privacy notice",
];
const keywordsOf = (count: number, salt: number) =>
  Array.from({ length: count }, (_, i) => `${TOPICS[i % TOPICS.length]}${i >= TOPICS.length ? ` ${Math.floor(i / TOPICS.length) + salt}` : ""}`);

const dataDir = mkdtempSync(join(tmpdir(), "regkb-bench-screening-"));
const config = loadConfig({ ...process.env, REGKB_LOG_LEVEL: "warn" }, { dataDir, port: 0, host: "127.0.0.1" });
const deps = await createDeps(config);
const imported = await importSampleCorpus(deps);
const jurisdictions = deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions ORDER BY slug").all().map((r) => r.slug);
const org = createOrganisation(deps, { name: "Bench", jurisdictions });
const key = createApiKey(deps, { orgId: org.id }).key;
topUp(deps.db, { orgId: org.id, amountPence: 1_000_000, key: ledgerKeys.operatorTopUp(org.id, "bench"), description: "bench credit", nowMs: Date.now() });
const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: backgroundServices(deps) });

const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
async function create(keywords: string[]): Promise<string> {
  const res = await fetch(`${server.url}/v1/screenings`, { method: "POST", headers, body: JSON.stringify({ keywords, topK: 5 }) });
  if (res.status !== 202) throw new Error(`POST /v1/screenings → ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
}
const statusOf = (id: string) =>
  deps.db.query<{ status: string }, [string]>("SELECT status FROM runs WHERE id = ?").get(id)!.status;
async function untilFinished(ids: string[]): Promise<void> {
  while (ids.some((id) => !["completed", "failed"].includes(statusOf(id)))) await Bun.sleep(1);
  const failed = ids.filter((id) => statusOf(id) === "failed");
  if (failed.length > 0) throw new Error(`${failed.length} screenings failed`);
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

console.log(`corpus: ${imported.chunksAdded + imported.chunksUnchanged} passages, embedder ${config.embedder.kind}, screening concurrency ${config.screeningConcurrency}`);

// Warm-up: first queries load lazily built structures.
await untilFinished([await create(keywordsOf(20, 99))]);

for (let round = 1; round <= rounds; round++) {
  // Lag sampler: a 1 ms timer chain; its lateness is how long the loop was busy.
  const lagsMs: number[] = [];
  let sampling = true;
  const tick = () => {
    const expected = performance.now() + 1;
    setTimeout(() => {
      lagsMs.push(Math.max(0, performance.now() - expected));
      if (sampling) tick();
    }, 1);
  };
  tick();
  const healthMs: number[] = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const t0 = performance.now();
      await (await fetch(`${server.url}/healthz`)).text();
      healthMs.push(performance.now() - t0);
      await Bun.sleep(2);
    }
  })();

  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const id = await create(keywordsOf(100, round));
  await untilFinished([id]);
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  sampling = false;
  probing = false;
  await probe;
  const run = deps.db.query<{ started_at_ms: number; completed_at_ms: number }, [string]>("SELECT started_at_ms, completed_at_ms FROM runs WHERE id = ?").get(id)!;
  const execMs = run.completed_at_ms - run.started_at_ms;
  lagsMs.sort((a, b) => a - b);
  healthMs.sort((a, b) => a - b);
  console.log(
    `100-keyword screening #${round}: wall ${ms(wallMs)} (POST → completed), run ${execMs} ms → ${(100 / (execMs / 1000)).toFixed(0)} keywords/s; ` +
      `process CPU ${((cpu.user + cpu.system) / 1000 / 100).toFixed(1)} ms/keyword (incl. the probes below); ` +
      `event-loop lag p50 ${ms(pct(lagsMs, 50))} p99 ${ms(pct(lagsMs, 99))} max ${ms(lagsMs.at(-1)!)}; ` +
      `/healthz during run p50 ${ms(pct(healthMs, 50))} p99 ${ms(pct(healthMs, 99))} max ${ms(healthMs.at(-1)!)} (n=${healthMs.length})`,
  );
}

for (let round = 1; round <= rounds; round++) {
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: 20 }, (_, i) => create(keywordsOf(10, round * 100 + i))));
  await untilFinished(ids);
  const seconds = (performance.now() - t0) / 1000;
  console.log(`20 queued screenings × 10 keywords #${round}: ${ms(seconds * 1000)} → ${(20 / seconds).toFixed(1)} runs/s, ${(200 / seconds).toFixed(0)} keywords/s`);
}

await server.stop();
rmSync(dataDir, { recursive: true, force: true });
