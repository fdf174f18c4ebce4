import type { SQL } from "bun";
import type { SqlDatabase } from "../db/sql-database";
import type { Clock } from "../clock";
import type { Config } from "../config";
import type { Metrics } from "../metrics";
import type { Logger } from "../log";
import type { BackgroundService } from "../lifecycle";
import { leaseOwnerIsDead, newLeaseOwner } from "./lease-owner";
import * as store from "./store";
import { RunFailure, type Run, type RunKindSpec } from "./types";
import { RUNS_CHANNEL } from "./wake-ups";

/** Fallback look for pending runs that no wake() or notification announced (runs created by another process). */
const POLL_INTERVAL_MS_DEFAULT = 1_000;
/** Default bound on one attempt of a run. */
export const RUN_TIMEOUT_MS_DEFAULT = 15 * 60_000;
export const RUN_TIMEOUT_MS_MAX = 6 * 60 * 60_000;
export const RUN_CONCURRENCY_MAX = 64;
export const RUN_KINDS_MAX = 32;

type AbortReason = "stopping" | "lease_lost" | "timeout";

interface InFlight {
  run: Run;
  controller: AbortController;
  done: Promise<void>;
}

interface KindState<Db extends SqlDatabase> {
  spec: RunKindSpec<any, any, Db>;
  maxAttempts: number;
  timeoutMs: number;
  inFlight: Map<string, InFlight>;
  wakeQueued: boolean;
}

/** `db`: the system of record, bun:sqlite's Database or the PostgreSQL handle (the kinds take the same). */
export interface RunEngineDeps<Db extends SqlDatabase = SqlDatabase> {
  config: Pick<Config, "runLeaseMs" | "runMaxAttempts" | "shutdownTimeoutMs" | "runsPerOrganisationMax">;
  db: Db;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** How often to look for runs nobody announced, and to recover dead workers' runs; default 1 s. */
  pollIntervalMs?: number;
  /**
   * On PostgreSQL: a connection of the engine's own (Bun.sql) on which it LISTENs for
   * other nodes' new runs (announceRun) and wakes that kind's workers at once. Polling
   * still finds what a lost notification announced. The caller opens and closes it.
   */
  listener?: Pick<SQL, "listen">;
}

/**
 * Claims pending runs with a lease, fairly between organisations (store.claimNextRun, with
 * REGKB_RUNS_PER_ORGANISATION_MAX), executes them with per-kind concurrency, renews
 * leases while they work, returns runs of dead workers to pending (failing them after
 * max attempts) and commits each outcome together with its money in one transaction.
 */
export class RunEngine<Db extends SqlDatabase = SqlDatabase> implements BackgroundService {
  readonly name = "runs";
  /** This engine's identity in `runs.lease_owner`. */
  readonly owner = newLeaseOwner();
  private readonly kinds = new Map<string, KindState<Db>>();
  private started = false;
  private renewTimer: ReturnType<typeof setInterval> | undefined;
  private tickTimer: ReturnType<typeof setInterval> | undefined;
  private lastRecoveryMs = Number.NEGATIVE_INFINITY;
  private listening: Promise<(() => Promise<void>) | undefined> | undefined;
  private readonly durations;
  private readonly recovered;

  constructor(private readonly deps: RunEngineDeps<Db>) {
    this.durations = deps.metrics.histogram(
      "regkb_run_duration_seconds",
      "Wall time of one run attempt, by kind and outcome (completed, failed, requeued).",
    );
    this.recovered = deps.metrics.counter(
      "regkb_runs_recovered_total",
      "Runs taken back from a dead worker, by kind and outcome (requeued, failed).",
    );
    deps.metrics.gauge("regkb_runs", "Unfinished runs (queue depth) by kind and status.", () => this.queueDepth());
  }

  /**
   * Registers (or, for a kind already known, replaces — buildApp may run twice on one
   * deps) the handlers of a kind of run. Registering after start() starts serving it.
   */
  register<Input, Output>(spec: RunKindSpec<Input, Output, Db>): void {
    if (!/^[a-z][a-z0-9_]{0,63}$/.test(spec.kind)) throw new Error(`run kind ${JSON.stringify(spec.kind)} must be snake_case`);
    if (!Number.isInteger(spec.concurrency) || spec.concurrency < 1 || spec.concurrency > RUN_CONCURRENCY_MAX) {
      throw new Error(`run kind ${spec.kind}: concurrency must be 1 to ${RUN_CONCURRENCY_MAX}`);
    }
    const maxAttempts = spec.maxAttempts ?? this.deps.config.runMaxAttempts;
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error(`run kind ${spec.kind}: maxAttempts must be ≥ 1`);
    const timeoutMs = spec.timeoutMs ?? RUN_TIMEOUT_MS_DEFAULT;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > RUN_TIMEOUT_MS_MAX) {
      throw new Error(`run kind ${spec.kind}: timeoutMs must be 1 to ${RUN_TIMEOUT_MS_MAX}`);
    }
    const existing = this.kinds.get(spec.kind);
    if (!existing && this.kinds.size >= RUN_KINDS_MAX) throw new Error(`more than ${RUN_KINDS_MAX} run kinds`);
    const state: KindState<Db> = existing ?? { spec, maxAttempts, timeoutMs, inFlight: new Map(), wakeQueued: false };
    Object.assign(state, { spec, maxAttempts, timeoutMs });
    this.kinds.set(spec.kind, state);
    if (this.started) {
      this.recoverKind(state);
      this.wake(spec.kind);
    }
  }

  /** Recovers runs left behind by dead workers, then starts claiming (and listening, given a listener). */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.recoverAll();
    this.renewTimer = setInterval(() => this.renew(), Math.max(100, Math.floor(this.deps.config.runLeaseMs / 3)));
    this.tickTimer = setInterval(() => this.tick(), this.deps.pollIntervalMs ?? POLL_INTERVAL_MS_DEFAULT);
    this.renewTimer.unref();
    this.tickTimer.unref();
    for (const kind of this.kinds.keys()) this.wake(kind);
    if (this.deps.listener) await (this.listening = this.listen(this.deps.listener));
  }

  /** Subscribes to announced runs; without the subscription (PostgreSQL unreachable) polling finds them. */
  private async listen(listener: Pick<SQL, "listen">): Promise<(() => Promise<void>) | undefined> {
    try {
      const subscription = await listener.listen(RUNS_CHANNEL, (kind) => this.wake(kind));
      return () => subscription.unlisten();
    } catch (error) {
      this.deps.log.error("run_listen_failed", { message: messageOf(error) });
      return undefined;
    }
  }

  /**
   * Stops claiming, waits for in-flight runs up to the shutdown timeout, then aborts the
   * rest and returns them to pending (not counted as an attempt) for the next start.
   */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    clearInterval(this.tickTimer);
    const unlisten = await this.listening;
    this.listening = undefined;
    await unlisten?.().catch((error: unknown) => this.deps.log.error("run_unlisten_failed", { message: messageOf(error) }));
    const inFlight = () => [...this.kinds.values()].flatMap((k) => [...k.inFlight.values()]);
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      Promise.allSettled(inFlight().map((f) => f.done)),
      new Promise<void>((done) => (graceTimer = setTimeout(done, this.deps.config.shutdownTimeoutMs))),
    ]);
    clearTimeout(graceTimer);
    const left = inFlight();
    for (const f of left) f.controller.abort("stopping" satisfies AbortReason);
    await Promise.allSettled(left.map((f) => f.done));
    // Leases were renewed while runs finished: a grace period longer than the lease must not let another worker take over.
    clearInterval(this.renewTimer);
  }

  /** Asks the engine to look for pending runs of `kind` now; call after the creating transaction commits. */
  wake(kind: string): void {
    const state = this.kinds.get(kind);
    if (!state || state.wakeQueued) return;
    state.wakeQueued = true;
    // Deferred so a claim never runs inside the caller's still-open transaction.
    queueMicrotask(() => {
      state.wakeQueued = false;
      this.pump(state);
    });
  }

  /** Runs executing in this process, by kind. */
  inFlightCount(kind: string): number {
    return this.kinds.get(kind)?.inFlight.size ?? 0;
  }

  private pump(state: KindState<Db>): void {
    if (!this.started) return;
    const { db, clock, config, log } = this.deps;
    while (state.inFlight.size < state.spec.concurrency) {
      let run: Run | undefined;
      try {
        run = store.claimNextRun(db, {
          kind: state.spec.kind,
          owner: this.owner,
          nowMs: clock.nowMs(),
          leaseMs: config.runLeaseMs,
          perOrganisationMax: config.runsPerOrganisationMax,
        });
      } catch (error) {
        // The database is busy or failing; the next tick tries again.
        log.error("run_claim_failed", { kind: state.spec.kind, message: messageOf(error) });
        return;
      }
      if (!run) return;
      this.launch(state, run);
    }
  }

  private launch(state: KindState<Db>, run: Run): void {
    const controller = new AbortController();
    const entry: InFlight = { run, controller, done: Promise.resolve() };
    state.inFlight.set(run.id, entry);
    entry.done = this.attempt(state, entry).finally(() => {
      state.inFlight.delete(run.id);
      this.pump(state);
    });
  }

  private async attempt(state: KindState<Db>, entry: InFlight): Promise<void> {
    const { spec, timeoutMs } = state;
    const { run, controller } = entry;
    const { log } = this.deps;
    const startedNs = Bun.nanoseconds();
    const seconds = () => (Bun.nanoseconds() - startedNs) / 1e9;
    const timeout = setTimeout(() => controller.abort("timeout" satisfies AbortReason), timeoutMs);
    log.info("run_started", { runId: run.id, kind: spec.kind, attempt: run.attempts });
    // Raced with the signal so an attempt that ignores it still cannot hold up shutdown.
    let result = await Promise.race([settle(() => spec.execute(run, controller.signal)), aborted(controller.signal)]);
    clearTimeout(timeout);

    if (result.kind === "aborted" && result.reason === "lease_lost") {
      log.warn("run_lease_lost", { runId: run.id, kind: spec.kind });
      return;
    }
    if (result.kind === "aborted" && result.reason === "stopping") {
      this.tryWrite(run, () => store.returnToPending(this.deps.db, run.id, this.owner, true));
      this.durations.observe({ kind: spec.kind, status: "requeued" }, seconds());
      log.info("run_requeued", { runId: run.id, kind: spec.kind });
      return;
    }
    if (result.kind === "aborted") {
      result = { kind: "error", error: new RunFailure(`run exceeded its time limit of ${Math.ceil(timeoutMs / 1000)} s`) };
    }
    if (result.kind === "done") {
      try {
        if (!this.complete(state, run, result.output)) return log.warn("run_lease_lost", { runId: run.id, kind: spec.kind });
        this.durations.observe({ kind: spec.kind, status: "completed" }, seconds());
        log.info("run_completed", { runId: run.id, kind: spec.kind, ms: Math.round(seconds() * 1000) });
        return;
      } catch (error) {
        result = { kind: "error", error };
      }
    }
    const message = this.publicMessage(run, result.error);
    if (this.tryWrite(run, () => this.fail(state, run, this.owner, message))) {
      this.durations.observe({ kind: spec.kind, status: "failed" }, seconds());
      log.warn("run_failed", { runId: run.id, kind: spec.kind, error: message });
    }
  }

  /** Marks completed and lets the kind settle its money, in one transaction. */
  private complete(state: KindState<Db>, run: Run, output: unknown): boolean {
    const { db, clock } = this.deps;
    const outputJson = JSON.stringify(output ?? null);
    if (Buffer.byteLength(outputJson) > store.RUN_OUTPUT_BYTES_MAX) {
      throw new RunFailure(`run output exceeds ${store.RUN_OUTPUT_BYTES_MAX} bytes`);
    }
    return db
      .transaction(() => {
        if (!store.markCompleted(db, run.id, this.owner, outputJson, clock.nowMs())) return false;
        state.spec.onCompleted(db, run, output);
        return true;
      })
      .immediate();
  }

  /** Marks failed (if `owner` still holds the lease) and lets the kind release its money, in one transaction. */
  private fail(state: KindState<Db>, run: Run, owner: string, message: string): boolean {
    const { db, clock } = this.deps;
    return db
      .transaction(() => {
        if (!store.markFailed(db, run.id, owner, message, clock.nowMs())) return false;
        state.spec.onFailed(db, run, message);
        return true;
      })
      .immediate();
  }

  /** RunFailure messages are for the organisation; anything else may hold internals (SQL, paths) and stays in the log. */
  private publicMessage(run: Run, error: unknown): string {
    if (error instanceof RunFailure) return error.message.slice(0, store.RUN_ERROR_LENGTH_MAX);
    this.deps.log.error("run_error", { runId: run.id, kind: run.kind, errorName: error instanceof Error ? error.name : typeof error, message: messageOf(error) });
    return `internal error while running (reference ${run.id})`;
  }

  /** A write that must not throw out of the worker; a failure leaves the lease to expire and recovery to retry. */
  private tryWrite(run: Run, write: () => boolean): boolean {
    try {
      return write();
    } catch (error) {
      this.deps.log.error("run_write_failed", { runId: run.id, kind: run.kind, message: messageOf(error) });
      return false;
    }
  }

  private renew(): void {
    const { db, clock, config, log } = this.deps;
    let held: Set<string>;
    try {
      held = store.renewLeases(db, this.owner, clock.nowMs() + config.runLeaseMs);
    } catch (error) {
      log.error("run_lease_renew_failed", { message: messageOf(error) });
      return;
    }
    for (const state of this.kinds.values()) {
      for (const [id, entry] of state.inFlight) {
        if (!held.has(id)) entry.controller.abort("lease_lost" satisfies AbortReason);
      }
    }
  }

  private tick(): void {
    if (this.deps.clock.nowMs() - this.lastRecoveryMs >= this.deps.config.runLeaseMs / 2) this.recoverAll();
    for (const state of this.kinds.values()) this.pump(state);
  }

  private recoverAll(): void {
    this.lastRecoveryMs = this.deps.clock.nowMs();
    for (const state of this.kinds.values()) this.recoverKind(state);
  }

  /**
   * Runs whose lease expired (or whose owner process is gone) go back to pending, or
   * fail with their hold released once they used up their attempts. Each take-over is
   * conditional on the lease being unchanged, so a worker that renewed meanwhile keeps it.
   */
  private recoverKind(state: KindState<Db>): void {
    const { db, clock, log } = this.deps;
    const kind = state.spec.kind;
    let leased: store.LeasedRun[];
    try {
      leased = store.listOthersLeases(db, kind, this.owner);
    } catch (error) {
      log.error("run_recovery_failed", { kind, message: messageOf(error) });
      return;
    }
    for (const lease of leased) {
      if (lease.leaseExpiresAtMs > clock.nowMs() && !leaseOwnerIsDead(lease.leaseOwner)) continue;
      const run = store.getRunById(db, lease.id);
      if (!run) continue;
      const abandoned = lease.attempts >= state.maxAttempts;
      const message = `run abandoned after ${lease.attempts} attempts: its worker stopped before finishing`;
      const taken = this.tryWrite(run, () =>
        db
          .transaction(() => {
            // Re-read under the write lock: a worker that renewed since the scan keeps its run.
            if (!store.leaseUnchanged(db, lease)) return false;
            if (abandoned) return this.fail(state, run, lease.leaseOwner, message);
            return store.returnToPending(db, run.id, lease.leaseOwner, false);
          })
          .immediate(),
      );
      if (!taken) continue;
      this.recovered.inc({ kind, outcome: abandoned ? "failed" : "requeued" });
      if (abandoned) log.warn("run_failed", { runId: run.id, kind, error: message });
      else log.warn("run_recovered", { runId: run.id, kind, attempts: lease.attempts });
    }
    this.wake(kind);
  }

  private queueDepth() {
    const counts = new Map<string, number>();
    for (const kind of this.kinds.keys()) for (const status of ["pending", "running"]) counts.set(`${kind}\u0000${status}`, 0);
    for (const row of store.countUnfinished(this.deps.db)) counts.set(`${row.kind}\u0000${row.status}`, row.count);
    return [...counts].map(([key, value]) => {
      const [kind, status] = key.split("\u0000") as [string, string];
      return { labels: { kind, status }, value };
    });
  }
}

type AttemptResult =
  | { kind: "done"; output: unknown }
  | { kind: "error"; error: unknown }
  | { kind: "aborted"; reason: AbortReason };

async function settle(execute: () => Promise<unknown>): Promise<AttemptResult> {
  try {
    return { kind: "done", output: await execute() };
  } catch (error) {
    return { kind: "error", error };
  }
}

function aborted(signal: AbortSignal): Promise<AttemptResult> {
  return new Promise((resolve) => {
    const done = () => resolve({ kind: "aborted", reason: signal.reason as AbortReason });
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 500);
}
