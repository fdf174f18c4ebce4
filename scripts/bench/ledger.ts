/**
 * Ledger benchmark: charged requests per second through HTTP, 32 concurrent clients, with
 * p50/p99 latency. The server runs in its own process (the load generator must not share
 * its event loop) over a fresh database; each request is authenticated, passes the
 * Idempotency-Key plugin, and is charged 2p in its own BEGIN IMMEDIATE transaction (the
 * paid route of test/billing/paid-app.ts, i.e. POST /v1/search without the search work).
 *
 *   bun scripts/bench/ledger.ts [--seconds 10] [--clients 32] [--synchronous NORMAL|FULL|both] [--idempotency-keys]
 *
 * Target: ≥ 2,000 charged requests/s on a 2-core machine.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { tempDir } from "../../test/helpers/server";
import { createPaidOrg, startPaidServer } from "../../test/billing/paid-app";

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    clients: { type: "string", default: "32" },
    synchronous: { type: "string", default: "both" },
    "idempotency-keys": { type: "boolean", default: false },
    serve: { type: "string" },
  },
});

if (args.serve) {
  // Child: serve the paid route over the given data directory with the requested durability.
  const server = await startPaidServer(args.serve);
  server.deps.db.exec(`PRAGMA synchronous = ${args.synchronous === "FULL" ? "FULL" : "NORMAL"}`);
  process.stdout.write(`${server.url}\n`);
  process.once("SIGTERM", () => server.stop().then(() => process.exit(0)));
} else {
  const seconds = Math.min(300, Math.max(1, Number(args.seconds)));
  const clients = Math.min(1024, Math.max(1, Number(args.clients)));
  const modes = args.synchronous === "both" ? ["NORMAL", "FULL"] : [args.synchronous === "FULL" ? "FULL" : "NORMAL"];
  for (const mode of modes) await runOnce(mode, seconds, clients, args["idempotency-keys"] === true);
}

async function runOnce(mode: string, seconds: number, clients: number, withKeys: boolean): Promise<void> {
  const dataDir = tempDir("regkb-bench-ledger-");
  const setup = await createDeps(loadConfig({ REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0" }, { dataDir }));
  const startPence = 10_000_000;
  const org = createPaidOrg(setup, startPence, "Bench org");
  const child = Bun.spawn([process.execPath, import.meta.path, "--serve", dataDir, "--synchronous", mode], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("bench server exited early");
    text += new TextDecoder().decode(value);
  }
  const url = `${text.trim()}/v1/test-paid`;
  const headers = { authorization: `Bearer ${org.key}`, "content-type": "application/json" };
  const body = JSON.stringify({ query: "notify the supervisory authority" });

  const post = async (n: number) => {
    const h: Record<string, string> = withKeys ? { ...headers, "idempotency-key": `bench-${n}` } : headers;
    const response = await fetch(url, { method: "POST", headers: h, body });
    await response.arrayBuffer();
    return response.status;
  };
  // Warm-up: route compilation and JIT, not measured.
  for (let i = 0; i < 200; i++) await post(-1 - i);

  const latenciesMs: number[] = [];
  let ok = 0;
  let failed = 0;
  let sequence = 0;
  const endAt = performance.now() + seconds * 1000;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < endAt) {
        const t0 = performance.now();
        const status = await post(sequence++);
        latenciesMs.push(performance.now() - t0);
        if (status === 200) ok++;
        else failed++;
      }
    }),
  );
  const elapsedS = (performance.now() - startedAt) / 1000;
  child.kill("SIGTERM");
  await child.exited;

  latenciesMs.sort((a, b) => a - b);
  const pct = (p: number) => latenciesMs[Math.min(latenciesMs.length - 1, Math.floor((p / 100) * latenciesMs.length))]!.toFixed(2);
  const balance = getBalance(setup.db, org.orgId);
  const verified = verifyLedger(setup.db).ok;
  const chargedPence = startPence - balance.availablePence;
  setup.db.close();
  rmSync(dataDir, { recursive: true, force: true });
  console.log(
    [
      `synchronous=${mode}${withKeys ? " +Idempotency-Key" : ""} clients=${clients} ${elapsedS.toFixed(1)}s:`,
      `${(ok / elapsedS).toFixed(0)} charged requests/s`,
      `p50 ${pct(50)} ms, p99 ${pct(99)} ms`,
      `(${ok} ok, ${failed} failed; ${chargedPence}p charged incl. warm-up = ${chargedPence / 2} charges; ledger verify ${verified ? "ok" : "FAILED"})`,
    ].join("  "),
  );
}
