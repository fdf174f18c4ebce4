// Execution sandbox figures: `bun scripts/bench/executions.ts`. Prints, never asserts.
// Cold start per child, POST → running p50 with a warm pool through the real HTTP API,
// kill latency past the deadline, executions per minute with pool size 2, memory per child.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { backgroundServices } from "../../src/background";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { SandboxPool } from "../../src/executions/sandbox/pool";
import { createLogger } from "../../src/log";
import { startServer } from "../../src/server";

const SAMPLES = 20;
const dataDir = mkdtempSync(join(tmpdir(), "regkb-bench-exec-"));
const cacheDir = join(dataDir, "cache");
const log = createLogger("warn");

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function waitFor(condition: () => boolean, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("timed out waiting");
    await Bun.sleep(5);
  }
}

/** Resident memory of every sandbox child on the host (the Bun process running `__sandbox`). */
function sandboxChildRssMiB(): number[] {
  const ps = Bun.spawnSync(["ps", "-eo", "rss=,args="]).stdout.toString();
  return ps
    .split("\n")
    .filter((line) => line.includes("__sandbox") && !line.includes("unshare"))
    .map((line) => Number(line.trim().split(/\s+/)[0]) / 1024);
}

// 1. First start: materialise Pyodide and make the memory snapshot (≈ one cold load).
let startedMs = performance.now();
const pool = await SandboxPool.create({ size: 1, cacheDir, unsafeNoIsolation: false, memoryBytes: 512 * 1024 * 1024, log });
if (!pool.available) throw new Error(`sandbox unavailable: ${pool.unavailableReason}`);
pool.start();
await waitFor(() => pool.idleCount === 1);
console.log(`first child incl. snapshot creation: ${Math.round(performance.now() - startedMs)} ms`);

// 2. Cold start per child from the snapshot (spawn → locked and ready), one at a time.
const coldMs: number[] = [];
for (let i = 0; i < 5; i++) {
  await pool.run("pass", 5000);
  startedMs = performance.now();
  await waitFor(() => pool.idleCount === 1);
  coldMs.push(performance.now() - startedMs);
}
console.log(`cold start per child (snapshot): p50 ${Math.round(percentile(coldMs, 50))} ms, max ${Math.round(Math.max(...coldMs))} ms`);
console.log(`memory per idle child (RSS): ${sandboxChildRssMiB().map((m) => `${Math.round(m)} MiB`).join(", ")}`);

// 3. Kill latency past the deadline: total time of a 1 s busy loop minus its timeout.
const killMs: number[] = [];
for (let i = 0; i < 5; i++) {
  await waitFor(() => pool.idleCount === 1);
  startedMs = performance.now();
  const result = await pool.run("while True: pass", 1000);
  if (result.exitCode !== 124) throw new Error(`expected 124, got ${result.exitCode}`);
  killMs.push(performance.now() - startedMs - 1000);
}
console.log(`deadline → run returned (kill latency, incl. hand-over): p50 ${Math.round(percentile(killMs, 50))} ms, max ${Math.round(Math.max(...killMs))} ms`);
await pool.close();

// 4. POST → running through the real API with a warm pool of 2.
// init: the cache/ filled above sits beside a database that is new on purpose.
const config = loadConfig({ REGKB_LOG_LEVEL: "warn", REGKB_SANDBOX_POOL_SIZE: "2" }, { dataDir, port: 0, host: "127.0.0.1", init: true });
const deps = await createDeps(config);
const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: backgroundServices(deps) });
const org = createOrganisation(deps, { name: "Bench", jurisdictions: [] });
const { key } = createApiKey(deps, { orgId: org.id });
topUp(deps.db, { orgId: org.id, amountPence: 100_000, key: ledgerKeys.operatorTopUp(org.id), description: "bench credit", nowMs: Date.now() });
const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };

async function postAndWait(code: string): Promise<{ toRunningMs: number; status: string }> {
  const startMs = performance.now();
  const created = await fetch(`${server.url}/v1/executions`, { method: "POST", headers, body: JSON.stringify({ code, timeoutSeconds: 10 }) });
  const { id } = (await created.json()) as { id: string };
  let toRunningMs: number | undefined;
  for (;;) {
    const res = (await (await fetch(`${server.url}/v1/executions/${id}`, { headers })).json()) as { status: string };
    if (res.status !== "pending") toRunningMs ??= performance.now() - startMs;
    if (res.status === "completed" || res.status === "failed") return { toRunningMs: toRunningMs!, status: res.status };
    await Bun.sleep(1);
  }
}

const toRunning: number[] = [];
for (let i = 0; i < SAMPLES; i++) {
  await waitFor(() => deps.sandbox.idleCount === 2);
  toRunning.push((await postAndWait("print(1)")).toRunningMs);
}
console.log(`POST → running (warm pool): p50 ${percentile(toRunning, 50).toFixed(1)} ms, p95 ${percentile(toRunning, 95).toFixed(1)} ms`);

// 5. Sustained throughput: back-to-back short runs, two at a time, pool size 2.
await waitFor(() => deps.sandbox.idleCount === 2);
startedMs = performance.now();
let completed = 0;
await Promise.all(
  [0, 1].map(async () => {
    for (let i = 0; i < SAMPLES / 2; i++) if ((await postAndWait("print(sum(range(1000)))")).status === "completed") completed += 1;
  }),
);
const perMinute = (completed / (performance.now() - startedMs)) * 60_000;
console.log(`sustained executions per minute (pool size 2, ${navigatorCores()} cores): ${perMinute.toFixed(0)}`);

await server.stop();
rmSync(dataDir, { recursive: true, force: true });

function navigatorCores(): number {
  return navigator.hardwareConcurrency;
}
