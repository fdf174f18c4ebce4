import type { SqlDatabase } from "../../src/db/sql-database";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import { createOrganisation } from "../../src/auth/service";
import { loadConfig } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { uuidv7 } from "../../src/ids";
import { RunEngine } from "../../src/jobs/engine";
import { createRun, findRun } from "../../src/jobs/store";
import { RunFailure, type Run, type RunKindSpec } from "../../src/jobs/types";
import { tempDir } from "../helpers/server";

let dataDir: string;
let deps: Deps;
let orgId: string;
const engines: RunEngine[] = [];

let kindName = "";
let kindCount = 0;

// One database for the file; each test gets its own kind, so runs left by one test are invisible to the next.
beforeAll(async () => {
  dataDir = tempDir("regkb-jobs-");
  deps = await createDeps(loadConfig({ REGKB_LOG_LEVEL: "silent" }, { dataDir }));
  orgId = createOrganisation(deps, { name: "Jobs" }).id;
  deps.db.exec("CREATE TABLE outcomes (run_id TEXT NOT NULL, outcome TEXT NOT NULL, detail TEXT)");
});
beforeEach(() => {
  kindName = `test_kind_${++kindCount}`;
});
afterEach(async () => {
  for (const engine of engines.splice(0)) await engine.stop();
});
afterAll(() => {
  deps.db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function engine(options: { leaseMs?: number; shutdownTimeoutMs?: number; maxAttempts?: number; perOrganisationMax?: number } = {}): RunEngine {
  const e = new RunEngine({
    ...deps,
    config: {
      runLeaseMs: options.leaseMs ?? 30_000,
      runMaxAttempts: options.maxAttempts ?? 3,
      shutdownTimeoutMs: options.shutdownTimeoutMs ?? 5_000,
      runsPerOrganisationMax: options.perOrganisationMax ?? 0,
    },
  });
  engines.push(e);
  return e;
}

/** A kind whose handlers record what happened, in the same table the money would go to. */
function kind(overrides: Partial<RunKindSpec<{ n: number }, { doubled: number }>> = {}): RunKindSpec<{ n: number }, { doubled: number }> {
  return {
    kind: kindName,
    concurrency: 2,
    execute: async (run) => ({ doubled: run.input.n * 2 }),
    onCompleted: (db, run, output) => record(db, run, "completed", JSON.stringify(output)),
    onFailed: (db, run, error) => record(db, run, "failed", error),
    ...overrides,
  };
}

function record(db: SqlDatabase, run: Run, outcome: string, detail: string): void {
  db.query("INSERT INTO outcomes (run_id, outcome, detail) VALUES (?, ?, ?)").run(run.id, outcome, detail);
}

function outcomes(runId: string): { outcome: string; detail: string }[] {
  return deps.db.query<{ outcome: string; detail: string }, [string]>("SELECT outcome, detail FROM outcomes WHERE run_id = ?").all(runId);
}

function newRun(n = 21, owner = orgId): string {
  const id = uuidv7();
  deps.db.transaction(() => createRun(deps.db, { id, orgId: owner, kind: kindName, input: { n }, createdAtMs: deps.clock.nowMs() })).immediate();
  return id;
}

const get = (id: string) => findRun(deps.db, { id, orgId, kind: kindName })!;

async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not reached in time");
    await Bun.sleep(2);
  }
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("run engine", () => {
  test("a woken run completes within milliseconds; output and onCompleted commit together", async () => {
    const e = engine();
    e.register(kind());
    e.start();
    await Bun.sleep(5);
    const started = performance.now();
    const id = newRun(21);
    e.wake(kindName);
    await until(() => get(id).status === "completed");
    expect(performance.now() - started).toBeLessThan(200); // far below the 1 s poll tick
    const run = get(id);
    expect(run).toMatchObject({ status: "completed", output: { doubled: 42 }, error: null, attempts: 1 });
    expect(run.completedAtMs).toBeNumber();
    expect(outcomes(id)).toEqual([{ outcome: "completed", detail: '{"doubled":42}' }]);
  });

  test("per-kind concurrency caps runs in flight; the queue drains in creation order", async () => {
    const gate = deferred();
    let peak = 0;
    let active = 0;
    const order: number[] = [];
    const e = engine();
    e.register(kind({
      concurrency: 3,
      execute: async (run) => {
        order.push(run.input.n);
        peak = Math.max(peak, ++active);
        await gate.promise;
        active -= 1;
        return { doubled: 0 };
      },
    }));
    e.start();
    const ids = Array.from({ length: 10 }, (_, i) => newRun(i));
    e.wake(kindName);
    await until(() => e.inFlightCount(kindName) === 3);
    await Bun.sleep(20);
    expect(e.inFlightCount(kindName)).toBe(3);
    gate.resolve();
    await until(() => ids.every((id) => get(id).status === "completed"));
    expect(peak).toBe(3);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  test("RunFailure keeps its message; other errors are recorded generically; onFailed runs once", async () => {
    const e = engine();
    e.register(kind({
      execute: async (run) => {
        if (run.input.n === 1) throw new RunFailure("keyword index unavailable");
        throw new Error("SQLITE_CORRUPT: database disk image is malformed at /var/secret");
      },
    }));
    e.start();
    const visible = newRun(1);
    const hidden = newRun(2);
    e.wake(kindName);
    await until(() => get(visible).status === "failed" && get(hidden).status === "failed");
    expect(get(visible).error).toBe("keyword index unavailable");
    expect(get(hidden).error).toBe(`internal error while running (reference ${hidden})`);
    expect(outcomes(visible)).toEqual([{ outcome: "failed", detail: "keyword index unavailable" }]);
    expect(outcomes(hidden)).toHaveLength(1);
  });

  test("when onCompleted throws, nothing of the completion is kept and the run fails instead", async () => {
    const e = engine();
    e.register(kind({
      onCompleted: (db, run) => {
        record(db, run, "completed", "should be rolled back");
        throw new RunFailure("settlement refused");
      },
    }));
    e.start();
    const id = newRun();
    e.wake(kindName);
    await until(() => get(id).status === "failed");
    expect(get(id)).toMatchObject({ output: null, error: "settlement refused" });
    expect(outcomes(id)).toEqual([{ outcome: "failed", detail: "settlement refused" }]);
  });

  test("an attempt over its time limit fails", async () => {
    const e = engine();
    e.register(kind({ timeoutMs: 30, execute: () => new Promise(() => undefined) }));
    e.start();
    const id = newRun();
    e.wake(kindName);
    await until(() => get(id).status === "failed");
    expect(get(id).error).toBe("run exceeded its time limit of 1 s");
  });

  test("start-up recovery: an expired lease returns to pending and completes; one out of attempts fails with onFailed", async () => {
    const retried = newRun(5);
    const exhausted = newRun(6);
    const live = newRun(7);
    const now = deps.clock.nowMs();
    const lease = deps.db.query("UPDATE runs SET status = 'running', lease_owner = ?, lease_expires_at_ms = ?, attempts = ? WHERE id = ?");
    lease.run("elsewhere/1/dead", now - 1, 1, retried);
    lease.run("elsewhere/1/dead", now - 1, 3, exhausted);
    lease.run("elsewhere/1/alive", now + 60_000, 1, live);
    const e = engine({ maxAttempts: 3 });
    e.register(kind());
    e.start();
    await until(() => get(retried).status === "completed" && get(exhausted).status === "failed");
    expect(get(retried)).toMatchObject({ attempts: 2, output: { doubled: 10 } });
    expect(get(exhausted).error).toBe("run abandoned after 3 attempts: its worker stopped before finishing");
    expect(outcomes(exhausted)).toEqual([{ outcome: "failed", detail: get(exhausted).error! }]);
    // Another host's unexpired lease is respected.
    expect(get(live).status).toBe("running");
    expect(deps.metrics.render()).toContain(`regkb_runs_recovered_total{kind="${kindName}",outcome="requeued"} 1`);
  });

  test("a lease held by a dead process on this host is taken over at once, without waiting for expiry", async () => {
    const id = newRun(4);
    const dead = Bun.spawnSync(["true"]).pid;
    deps.db
      .query("UPDATE runs SET status = 'running', lease_owner = ?, lease_expires_at_ms = ?, attempts = 1 WHERE id = ?")
      .run(`${hostname()}/${dead}/gone`, deps.clock.nowMs() + 60_000, id);
    const e = engine();
    e.register(kind());
    e.start();
    await until(() => get(id).status === "completed");
  });

  test("periodic recovery takes over a lease that expires while the engine runs", async () => {
    const id = newRun(3);
    deps.db
      .query("UPDATE runs SET status = 'running', lease_owner = 'elsewhere/1/x', lease_expires_at_ms = ?, attempts = 1 WHERE id = ?")
      .run(deps.clock.nowMs() + 300, id);
    const e = engine({ leaseMs: 400 });
    e.register(kind());
    e.start();
    await Bun.sleep(100);
    expect(get(id).status).toBe("running");
    await until(() => get(id).status === "completed", 3_000);
  });

  test("a worker renews its lease while working and abandons a run whose lease was taken", async () => {
    const signals: AbortSignal[] = [];
    const e = engine({ leaseMs: 300 });
    e.register(kind({
      execute: (_run, signal) => {
        signals.push(signal);
        return new Promise(() => undefined);
      },
    }));
    e.start();
    const id = newRun();
    e.wake(kindName);
    await until(() => signals.length === 1);
    const first = deps.db.query<{ at: number }, [string]>("SELECT lease_expires_at_ms AS at FROM runs WHERE id = ?").get(id)!.at;
    await Bun.sleep(250);
    const renewed = deps.db.query<{ at: number }, [string]>("SELECT lease_expires_at_ms AS at FROM runs WHERE id = ?").get(id)!.at;
    expect(renewed).toBeGreaterThan(first);
    deps.db.query("UPDATE runs SET lease_owner = 'thief/1/x' WHERE id = ?").run(id);
    await until(() => signals[0]!.aborted);
    expect(signals[0]!.reason).toBe("lease_lost");
    await until(() => e.inFlightCount(kindName) === 0);
    expect(get(id)).toMatchObject({ status: "running", attempts: 1 });
    expect(outcomes(id)).toEqual([]);
  });

  test("stop waits for in-flight runs to finish", async () => {
    const e = engine({ shutdownTimeoutMs: 5_000 });
    e.register(kind({ execute: async (run) => (await Bun.sleep(100), { doubled: run.input.n * 2 }) }));
    e.start();
    const id = newRun(8);
    e.wake(kindName);
    await until(() => get(id).status === "running");
    await e.stop();
    expect(get(id)).toMatchObject({ status: "completed", output: { doubled: 16 } });
  });

  test("stop past the shutdown timeout aborts and returns the run to pending without using an attempt", async () => {
    const signals: AbortSignal[] = [];
    const e = engine({ shutdownTimeoutMs: 50 });
    e.register(kind({ execute: (_run, signal) => (signals.push(signal), new Promise(() => undefined)) }));
    e.start();
    const id = newRun();
    e.wake(kindName);
    await until(() => get(id).status === "running");
    const stopping = performance.now();
    await e.stop();
    expect(performance.now() - stopping).toBeLessThan(1_000);
    expect(signals[0]!.reason).toBe("stopping");
    expect(get(id)).toMatchObject({ status: "pending", attempts: 0 });
    // The next engine (a restart) picks it up.
    const next = engine();
    next.register(kind());
    next.start();
    await until(() => get(id).status === "completed");
    expect(get(id).attempts).toBe(1);
  });

  test("queue depth and run durations by kind and status are on /metrics", async () => {
    const gate = deferred();
    const e = engine();
    e.register(kind({ concurrency: 1, execute: async () => (await gate.promise, { doubled: 0 }) }));
    e.start();
    const ids = [newRun(), newRun(), newRun()];
    e.wake(kindName);
    await until(() => e.inFlightCount(kindName) === 1);
    const during = deps.metrics.render();
    expect(during).toContain(`regkb_runs{kind="${kindName}",status="pending"} 2`);
    expect(during).toContain(`regkb_runs{kind="${kindName}",status="running"} 1`);
    gate.resolve();
    await until(() => ids.every((id) => get(id).status === "completed"));
    const after = deps.metrics.render();
    expect(after).toContain(`regkb_runs{kind="${kindName}",status="pending"} 0`);
    expect(after).toContain(`regkb_run_duration_seconds_count{kind="${kindName}",status="completed"} 3`);
  });
});

describe("fairness between organisations", () => {
  const orgs: Record<string, string> = {};
  beforeAll(() => {
    for (const name of ["noisy", "quiet", "other"]) orgs[name] = createOrganisation(deps, { name: `Fair ${name}` }).id;
  });
  const runOrg = new Map<string, string>();
  const getAny = (id: string) => findRun(deps.db, { id, orgId: runOrg.get(id)!, kind: kindName })!;
  function queue(org: string, n: number): string {
    const id = newRun(n, orgs[org]);
    runOrg.set(id, orgs[org]!);
    return id;
  }

  test("one slot: a quiet organisation's run is the next claimed behind a noisy backlog, then turns alternate", async () => {
    const claimed: string[] = [];
    const e = engine();
    e.register(kind({ concurrency: 1, execute: async (run) => (claimed.push(`${run.orgId === orgs.noisy ? "noisy" : run.orgId === orgs.quiet ? "quiet" : "other"}${run.input.n}`), { doubled: 0 }) }));
    const ids = [0, 1, 2, 3, 4, 5].map((n) => queue("noisy", n));
    ids.push(queue("quiet", 0), queue("other", 0), queue("quiet", 1));
    e.start();
    await until(() => ids.every((id) => getAny(id).status === "completed"));
    expect(claimed).toEqual(["noisy0", "quiet0", "other0", "noisy1", "quiet1", "noisy2", "noisy3", "noisy4", "noisy5"]);
    expect(ids.map((id) => getAny(id).attempts)).toEqual(Array(ids.length).fill(1));
    expect(ids.map((id) => outcomes(id).length)).toEqual(Array(ids.length).fill(1));
  });

  test("two slots held by a noisy backlog: the quiet run takes the first slot that frees", async () => {
    const gates = new Map<string, { resolve: () => void }>();
    const everything = deferred();
    const claimed: string[] = [];
    const e = engine();
    e.register(kind({
      concurrency: 2,
      execute: async (run) => {
        claimed.push(run.id);
        const gate = deferred();
        gates.set(run.id, gate);
        await Promise.race([gate.promise, everything.promise]);
        return { doubled: 0 };
      },
    }));
    e.start();
    const noisy = [0, 1, 2, 3, 4].map((n) => queue("noisy", n));
    e.wake(kindName);
    await until(() => e.inFlightCount(kindName) === 2);
    const quiet = queue("quiet", 0);
    e.wake(kindName);
    await Bun.sleep(20);
    expect(claimed).toEqual(noisy.slice(0, 2));
    gates.get(noisy[0]!)!.resolve();
    await until(() => claimed.length === 3);
    expect(claimed[2]).toBe(quiet);
    everything.resolve();
    await until(() => [...noisy, quiet].every((id) => getAny(id).status === "completed"));
    expect(claimed.slice(3).sort()).toEqual(noisy.slice(2).sort());
  });

  test("a per-organisation cap keeps slots free for others; runs over the cap wait, none is lost", async () => {
    const gate = deferred();
    const e = engine({ perOrganisationMax: 1 });
    e.register(kind({ concurrency: 3, execute: async () => (await gate.promise, { doubled: 0 }) }));
    e.start();
    const noisy = [0, 1, 2, 3].map((n) => queue("noisy", n));
    e.wake(kindName);
    await until(() => e.inFlightCount(kindName) === 1);
    await Bun.sleep(30);
    expect(e.inFlightCount(kindName)).toBe(1);
    const quiet = queue("quiet", 0);
    e.wake(kindName);
    await until(() => getAny(quiet).status === "running");
    expect(e.inFlightCount(kindName)).toBe(2);
    gate.resolve();
    await until(() => [...noisy, quiet].every((id) => getAny(id).status === "completed"));
    expect([...noisy, quiet].map((id) => getAny(id).attempts)).toEqual([1, 1, 1, 1, 1]);
  });
});
