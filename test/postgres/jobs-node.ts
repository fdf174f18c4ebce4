// One "node" for jobs-nodes.test.ts: a process of its own with its own synchronous PostgreSQL
// handle, using the runs store (or the run engine) exactly as a server would. It says `ready`
// and waits for `go` on stdin.
//   claim URL KIND OTHERS       claims runs of KIND until none is pending, keeping every lease; prints
//                               {"owner", "claimed": [ids], "emptyWhilePending": n} (claims that found nothing while
//                               a run was free; OTHERS is how many other nodes claim at the same time)
//   hold URL KIND COUNT LEASE_MS claims COUNT runs as an owner on another host (so others wait for expiry),
//                               prints {"owner", "claimed"}, then renews its leases until it is killed
//   engine URL KIND LEASE_MS    runs a RunEngine for KIND whose completions are rows of node_completions,
//                               until `stop` on stdin
import { say, waitFor } from "../helpers/node-child";
import { systemClock } from "../../src/clock";
import { openPostgresHandle, type PostgresHandle } from "../../src/db/postgres/sync/handle";
import { RunEngine } from "../../src/jobs/engine";
import { claimNextRun, renewLeases } from "../../src/jobs/store";
import { createLogger } from "../../src/log";
import { Metrics } from "../../src/metrics";

const [mode, url, kind, ...rest] = process.argv.slice(2) as [string, string, string, ...string[]];
const db = openPostgresHandle({ url });

say("ready");
await waitFor("go");

if (mode === "claim") {
  const owner = `claimer/${process.pid}/${crypto.randomUUID()}`;
  const claimed: string[] = [];
  const others = Number(rest[0]);
  let emptyWhilePending = 0;
  const pending = () => db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM runs WHERE kind = ? AND status = 'pending'").get(kind)!.n;
  // Nobody adds runs meanwhile, so runs still pending after an empty claim were pending during it; and each
  // other node's claim in flight locks at most one of them. More pending than that: one was free, and missed.
  while (emptyWhilePending < 1_000) {
    const run = claimNextRun(db, { kind, owner, nowMs: Date.now(), leaseMs: 600_000 });
    if (run) {
      claimed.push(run.id);
      continue;
    }
    const left = pending();
    if (left === 0) break;
    if (left > others) emptyWhilePending++;
  }
  say(JSON.stringify({ owner, claimed, emptyWhilePending }));
} else if (mode === "hold") {
  const [count, leaseMs] = [Number(rest[0]), Number(rest[1])];
  const owner = `elsewhere.invalid/1/${crypto.randomUUID()}`;
  const claimed: string[] = [];
  while (claimed.length < count) {
    const run = claimNextRun(db, { kind, owner, nowMs: Date.now(), leaseMs });
    if (!run) throw new Error("hold: fewer runs pending than asked for");
    claimed.push(run.id);
  }
  say(JSON.stringify({ owner, claimed }));
  setInterval(() => renewLeases(db, owner, Date.now() + leaseMs), leaseMs / 4);
  await new Promise(() => {});
} else {
  const leaseMs = Number(rest[0]);
  const engine = new RunEngine<PostgresHandle>({
    config: { runLeaseMs: leaseMs, runMaxAttempts: 3, shutdownTimeoutMs: 5_000, runsPerOrganisationMax: 0 },
    db,
    clock: systemClock,
    log: createLogger("warn"),
    metrics: new Metrics(),
  });
  const record = (handle: PostgresHandle, runId: string, outcome: string) =>
    handle.query("INSERT INTO node_completions (run_id, outcome, pid, at_ms) VALUES (?, ?, ?, ?)").run(runId, outcome, process.pid, Date.now());
  engine.register<unknown, { pid: number }>({
    kind,
    concurrency: 3,
    execute: async () => {
      await Bun.sleep(30);
      return { pid: process.pid };
    },
    onCompleted: (handle, run) => record(handle, run.id, "completed"),
    onFailed: (handle, run) => record(handle, run.id, "failed"),
  });
  engine.start();
  await waitFor("stop");
  await engine.stop();
  say("stopped");
}
db.close();
// stdin is still open (the test may write more): leave without waiting for it.
process.exit(0);
