import { renameSync } from "node:fs";
import type { Logger } from "../../log";
import { watchResidentMemory, type MemoryWatch } from "../../platform/memory-watch";
import { selfArgv } from "../../platform/self";
import { materialisePyodide, snapshotPath } from "./assets";
import { CappedOutput } from "./output";
import { probeIsolation } from "./probe";
import { encodeFrame, FrameReader, parseChildMessage, type ChildMessage } from "./protocol";

export interface ExecutionResult {
  /** 0, SystemExit's code, 1 for an uncaught exception, 124 when the deadline killed it, 137 when its memory did. */
  exitCode: number;
  stdout: string;
  stderr: string;
  /** Wall-clock time of the user's code only, measured by the parent. */
  durationMs: number;
}

/** The platform failed (not the user's code): the run is `failed` and never charged. */
export class SandboxInfraError extends Error {}

export interface SandboxPoolOptions {
  /** Pre-warmed children kept waiting; 0 starts one per run on demand. */
  size: number;
  /** The data dir's cache: Pyodide's files and the memory snapshot go here. */
  cacheDir: string;
  /** Run children without namespaces, pivot_root or seccomp (operator opt-out, REGKB_SANDBOX_UNSAFE_NO_ISOLATION=1). */
  unsafeNoIsolation: boolean;
  /** Memory one run may use beyond an idle child (REGKB_EXECUTION_MEMORY_MB); past it the run is stopped. */
  memoryBytes: number;
  log: Logger;
}

export const EXIT_CODE_TIMEOUT = 124;
/** 128 + SIGKILL, what a shell reports for a process the kernel's OOM killer ended. */
export const EXIT_CODE_MEMORY = 137;
/**
 * Resident memory a run may add on top of `memoryBytes` before the parent stops it, so code
 * that stays inside its wasm memory maximum meets Python's own MemoryError first.
 */
const MEMORY_WATCH_SLACK_BYTES = 64 * 1024 * 1024;
/** RLIMIT_CPU after start-up: the longest timeout (300 s) plus slack; the parent's deadline comes first. */
const CHILD_CPU_SECONDS = 330;
/** Load + lockdown of a child; generous because a busy 2-core host can take several seconds. */
const WARM_TIMEOUT_MS = 120_000;
/** From handing the code over to the child's "started"; the child only has to read a pipe. */
const START_TIMEOUT_MS = 10_000;
/** How long run() waits for a warm child before calling it an infrastructure failure. */
const ACQUIRE_TIMEOUT_MS = 180_000;
const WAITERS_MAX = 1024;
const SNAPSHOT_BYTES_MAX = 256 * 1024 * 1024;
/** Diagnostics kept from a child's own stderr (Bun crash text); never shown to users. */
const CHILD_STDERR_BYTES_MAX = 4096;
const WARM_RETRY_MS_MAX = 30_000;
/** After the child has exited, how long its last frames may take to arrive (its pipe closes with it). */
const OUTPUT_DRAIN_MS_MAX = 2_000;

type ChildState = "warming" | "idle" | "running" | "dead";

/** One sandbox process, from spawn to exit. Serves at most one run. */
class SandboxChild {
  state: ChildState = "warming";
  readonly ready: Promise<void>;
  readonly exited: Promise<number | null>;
  /** The process has exited and every frame it wrote has been read (or the drain bound passed). */
  readonly finished: Promise<void>;
  private readonly process: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
  private listener: ((message: ChildMessage) => void) | undefined;
  private protocolError: string | undefined;
  private diagnostics = "";

  constructor(command: string[], env: Record<string, string>) {
    this.process = Bun.spawn(command, { env, stdin: "pipe", stdout: "pipe", stderr: "pipe", detached: true });
    this.exited = this.process.exited.then(() => {
      this.state = "dead";
      return this.process.exitCode;
    });
    let warmTimer: ReturnType<typeof setTimeout> | undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      warmTimer = setTimeout(() => reject(new Error(`not ready after ${WARM_TIMEOUT_MS} ms`)), WARM_TIMEOUT_MS);
      this.listener = (message) => {
        if (message.type === "ready") resolve();
        else reject(new Error(message.type === "fatal" ? message.message : `unexpected ${message.type} before ready`));
      };
      void this.exited.then(() => reject(new Error(`exited during warm-up (${this.describeExit()})`)));
    }).finally(() => {
      clearTimeout(warmTimer);
      this.listener = undefined;
    });
    const framesRead = this.readFrames();
    this.finished = this.exited.then(() => Promise.race([framesRead, Bun.sleep(OUTPUT_DRAIN_MS_MAX)]));
    void this.drainStderr();
  }

  get pid(): number {
    return this.process.pid;
  }

  describeExit(): string {
    const how = this.process.signalCode ? `signal ${this.process.signalCode}` : `exit ${this.process.exitCode}`;
    const why = this.protocolError ? `; protocol: ${this.protocolError}` : "";
    const said = this.diagnostics.trim() ? `; stderr: ${this.diagnostics.trim().slice(-500)}` : "";
    return `${how}${why}${said}`;
  }

  /** What the parent saw of the child's end, in words a user may read (no diagnostics). */
  describeEndForUser(): string {
    if (this.protocolError !== undefined) return "its output broke the sandbox protocol";
    if (this.process.signalCode) return `killed by ${this.process.signalCode}`;
    return `exit status ${this.process.exitCode}`;
  }

  onMessage(listener: ((message: ChildMessage) => void) | undefined): void {
    this.listener = listener;
  }

  send(message: unknown): void {
    this.process.stdin.write(encodeFrame(message));
    void this.process.stdin.flush();
  }

  /** SIGKILL the whole process group (unshare and the child in its pid namespace). */
  kill(): void {
    try {
      process.kill(-this.process.pid, "SIGKILL");
    } catch {
      this.process.kill("SIGKILL");
    }
  }

  private async readFrames(): Promise<void> {
    const reader = new FrameReader();
    try {
      for await (const chunk of this.process.stdout) {
        reader.push(chunk, (frame) => this.listener?.(parseChildMessage(frame)));
      }
    } catch (error) {
      // Hostile or broken output: stop listening and kill; the exit handlers report it.
      this.protocolError = error instanceof Error ? error.message : String(error);
      this.kill();
    }
  }

  private async drainStderr(): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of this.process.stderr) {
      this.diagnostics = (this.diagnostics + decoder.decode(chunk, { stream: true })).slice(-CHILD_STDERR_BYTES_MAX);
    }
  }
}

interface Waiter {
  resolve(child: SandboxChild): void;
  reject(error: Error): void;
}

/**
 * Pre-warmed, already locked sandbox children. Each run takes one, the child runs the code
 * once and is killed, and a replacement starts warming at once: nothing survives between
 * runs or organisations.
 */
export class SandboxPool {
  readonly name = "sandbox";
  private readonly idle: SandboxChild[] = [];
  private readonly live = new Set<SandboxChild>();
  private readonly waiters: Waiter[] = [];
  private warming = 0;
  private consecutiveWarmFailures = 0;
  private everWarmed = false;
  private started = false;
  private closed = false;
  /** Aborted by close(), so a snapshot still being made cannot keep a stopping server alive. */
  private readonly closing = new AbortController();
  private reason: string | null;
  private prepared: Promise<{ command: string[]; env: Record<string, string> }> | undefined;

  private constructor(
    private readonly options: SandboxPoolOptions,
    /** setpriv … unshare … when isolated; undefined without isolation. */
    private readonly launcher: string[] | undefined,
    reason: string | null,
  ) {
    this.reason = reason;
  }

  /**
   * Probe the host (cheap: one `unshare … true`). Never throws for a refusing host: the
   * pool comes back unavailable with the reason. Nothing is spawned until start() (which
   * keeps `size` children warm) or the first run() (which starts one on demand), so
   * commands that never execute code pay nothing.
   */
  static async create(options: SandboxPoolOptions): Promise<SandboxPool> {
    if (options.unsafeNoIsolation) {
      options.log.warn("sandbox_isolation_disabled", { reason: "REGKB_SANDBOX_UNSAFE_NO_ISOLATION=1" });
      return new SandboxPool(options, undefined, null);
    }
    const probe = probeIsolation();
    if (!probe.ok) {
      options.log.error("sandbox_unavailable", { reason: probe.reason });
      return new SandboxPool(options, undefined, probe.reason);
    }
    return new SandboxPool(options, probe.launcher, null);
  }

  /** BackgroundService: keep `size` locked children warm from now on. */
  start(): void {
    this.started = true;
    this.fill();
  }

  /** BackgroundService: kill every child. */
  stop(): Promise<void> {
    return this.close();
  }

  get available(): boolean {
    return this.reason === null && !this.closed;
  }

  get unavailableReason(): string | null {
    return this.closed ? "the sandbox pool is shut down" : this.reason;
  }

  /** Children waiting with Pyodide loaded and locked down (for health and benchmarks). */
  get idleCount(): number {
    return this.idle.length;
  }

  /**
   * Run `code` in a fresh child. Resolves for anything the code does (including timeouts,
   * crashes and hostile output after it started); throws SandboxInfraError only when the
   * platform failed before the code ran, or when `signal` aborts (shutdown: retry later).
   */
  async run(code: string, timeoutMs: number, signal?: AbortSignal): Promise<ExecutionResult> {
    if (!this.available) throw new SandboxInfraError(`sandbox unavailable: ${this.unavailableReason}`);
    if (signal?.aborted) throw new SandboxInfraError("aborted before start");
    const child = await this.acquire(signal);
    this.fill();
    try {
      return await this.execute(child, code, timeoutMs, signal);
    } finally {
      child.kill();
      this.live.delete(child);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    for (const waiter of this.waiters.splice(0)) waiter.reject(new SandboxInfraError("sandbox pool closed"));
    const children = [...this.live];
    this.idle.length = 0;
    for (const child of children) child.kill();
    await Promise.all(children.map((child) => child.exited));
  }

  private execute(child: SandboxChild, code: string, timeoutMs: number, signal?: AbortSignal): Promise<ExecutionResult> {
    return new Promise<ExecutionResult>((resolve, reject) => {
      const stdout = new CappedOutput();
      const stderr = new CappedOutput();
      let startedAtMs: number | undefined;
      let settled = false;
      const timers: ReturnType<typeof setTimeout>[] = [];
      let memoryWatch: MemoryWatch | undefined;
      const finish = (outcome: { exitCode: number; durationMs: number } | Error) => {
        if (settled) return;
        settled = true;
        for (const timer of timers) clearTimeout(timer);
        memoryWatch?.stop();
        signal?.removeEventListener("abort", onAbort);
        child.onMessage(undefined);
        child.kill();
        if (outcome instanceof Error) reject(outcome);
        else resolve({ exitCode: outcome.exitCode, stdout: stdout.text(), stderr: stderr.text(), durationMs: outcome.durationMs });
      };
      const elapsedMs = () => Math.round(performance.now() - (startedAtMs ?? performance.now()));
      const onAbort = () => finish(new SandboxInfraError("run aborted (shutdown)"));
      const stopForMemory = () => {
        stderr.append(`\nMemoryError: the run used more than its ${mib(this.options.memoryBytes)} MiB of memory and was stopped\n`);
        finish({ exitCode: EXIT_CODE_MEMORY, durationMs: elapsedMs() });
      };
      signal?.addEventListener("abort", onAbort, { once: true });

      child.onMessage((message) => {
        switch (message.type) {
          case "started":
            if (startedAtMs !== undefined) return;
            startedAtMs = performance.now();
            // The hard deadline: SIGKILL of the process group, whatever the code is doing.
            timers.push(setTimeout(() => finish({ exitCode: EXIT_CODE_TIMEOUT, durationMs: timeoutMs }), timeoutMs));
            // The memory ceiling, measured from outside like the deadline (memory-watch.ts).
            memoryWatch = watchResidentMemory(child.pid, this.options.memoryBytes + MEMORY_WATCH_SLACK_BYTES, stopForMemory);
            return;
          case "stdout":
            stdout.append(message.text);
            return;
          case "stderr":
            stderr.append(message.text);
            return;
          case "result":
            // Validated (0–255) by parseChildMessage; a frame forged by user code can only end its own run early.
            if (startedAtMs === undefined) finish(new SandboxInfraError("result before start"));
            // However late this frame is read, the run's peak decides first (a sample may not have run since).
            // Our child waits to be killed after its result, so "ended" means user code ended the process after
            // writing the frame, taking its peak with it: not believed, the exit path reports the run.
            else if (memoryWatch?.check() === "within") finish({ exitCode: message.exitCode, durationMs: elapsedMs() });
            return;
          case "ready":
          case "fatal":
            if (startedAtMs === undefined) finish(new SandboxInfraError(`sandbox child: ${message.type === "fatal" ? message.message : "ready twice"}`));
            return;
        }
      });
      // Waits for the frames still in the pipe, so output written just before a crash is kept.
      void child.finished.then(() => {
        if (settled) return;
        if (startedAtMs === undefined) {
          finish(new SandboxInfraError(`sandbox child died before the code started (${child.describeExit()})`));
          return;
        }
        // Once user code runs the child is theirs: an exit without a result (os._exit via a JS
        // bridge, a crash it provoked, garbage on the pipe) is the code failing, not the platform,
        // or a run could be retried for free by ending it that way.
        stderr.append(`\n[the sandbox process ended without a result (${child.describeEndForUser()})]\n`);
        finish({ exitCode: 1, durationMs: elapsedMs() });
      });
      timers.push(
        setTimeout(() => {
          if (startedAtMs === undefined) finish(new SandboxInfraError(`sandbox child did not start within ${START_TIMEOUT_MS} ms`));
        }, START_TIMEOUT_MS),
      );
      child.state = "running";
      child.send({ code });
    });
  }

  private acquire(signal?: AbortSignal): Promise<SandboxChild> {
    const child = this.idle.shift();
    if (child) return Promise.resolve(child);
    if (this.waiters.length >= WAITERS_MAX) return Promise.reject(new SandboxInfraError("too many runs waiting for a sandbox"));
    return new Promise<SandboxChild>((resolve, reject) => {
      const timer = setTimeout(() => fail(new SandboxInfraError(`no sandbox ready within ${ACQUIRE_TIMEOUT_MS} ms`)), ACQUIRE_TIMEOUT_MS);
      const onAbort = () => fail(new SandboxInfraError("aborted while waiting for a sandbox"));
      const waiter: Waiter = {
        resolve: (ready) => {
          cleanup();
          resolve(ready);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
      };
      const cleanup = () => {
        clearTimeout(timer);
        signal?.removeEventListener("abort", onAbort);
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
      };
      const fail = (error: Error) => waiter.reject(error);
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
      this.fill();
    });
  }

  /** Keep `size` children idle or warming once started, plus one per run that is waiting. */
  private fill(): void {
    if (!this.available) return;
    const wanted = Math.max(this.started ? this.options.size : 0, this.waiters.length);
    while (this.idle.length + this.warming < wanted) this.spawn();
  }

  /**
   * Materialise Pyodide into the cache and make its memory snapshot (once per binary),
   * the first time a child is needed.
   */
  private prepare(): Promise<{ command: string[]; env: Record<string, string> }> {
    this.prepared ??= (async () => {
      const indexDir = await materialisePyodide(this.options.cacheDir);
      const snapshot = await ensureSnapshot(indexDir, this.options.log, this.closing.signal);
      const self = [...selfArgv(), "__sandbox"];
      return {
        command: this.launcher ? [...this.launcher, ...self] : self,
        env: {
          REGKB_SANDBOX_MODE: this.launcher ? "isolated" : "unsafe-no-isolation",
          REGKB_SANDBOX_MEMORY_BYTES: String(this.options.memoryBytes),
          REGKB_SANDBOX_INDEX_DIR: indexDir,
          REGKB_SANDBOX_CPU_SECONDS: String(CHILD_CPU_SECONDS),
          ...(snapshot ? { REGKB_SANDBOX_SNAPSHOT: snapshot } : {}),
        },
      };
    })();
    return this.prepared;
  }

  private spawn(): void {
    this.warming += 1;
    const startedMs = performance.now();
    let child: SandboxChild | undefined;
    this.prepare()
      .then(({ command, env }) => {
        if (this.closed) throw new Error("pool closed");
        child = new SandboxChild(command, env);
        this.live.add(child);
        return child.ready;
      })
      .then(
        () => {
          const ready = child!;
          this.warming -= 1;
          this.everWarmed = true;
          this.consecutiveWarmFailures = 0;
          this.options.log.info("sandbox_child_ready", { pid: ready.pid, warmMs: Math.round(performance.now() - startedMs) });
          if (this.closed) return ready.kill();
          ready.state = "idle";
          void ready.exited.then(() => this.discardIdle(ready));
          const waiter = this.waiters.shift();
          if (waiter) waiter.resolve(ready);
          else this.idle.push(ready);
        },
        (error: Error) => {
          this.warming -= 1;
          if (child) {
            this.live.delete(child);
            child.kill();
          }
          if (this.closed) return;
          this.consecutiveWarmFailures += 1;
          this.options.log.error("sandbox_child_failed", { pid: child?.pid ?? null, reason: error.message.slice(0, 1000) });
          if (!this.everWarmed && !this.options.unsafeNoIsolation && this.consecutiveWarmFailures >= 2) {
            // The probe passed but the real lockdown does not work on this host: refuse rather than retry forever.
            this.reason = `sandbox children cannot start: ${error.message.slice(0, 500)}`;
            this.options.log.error("sandbox_unavailable", { reason: this.reason });
            for (const waiter of this.waiters.splice(0)) waiter.reject(new SandboxInfraError(this.reason));
            return;
          }
          const delayMs = Math.min(WARM_RETRY_MS_MAX, 250 * 2 ** this.consecutiveWarmFailures);
          setTimeout(() => this.fill(), delayMs);
        },
      );
  }

  /** An idle child that dies (killed from outside, OOM) must not be handed to a run. */
  private discardIdle(child: SandboxChild): void {
    const index = this.idle.indexOf(child);
    if (index < 0) return;
    this.idle.splice(index, 1);
    this.live.delete(child);
    this.options.log.warn("sandbox_idle_child_died", { pid: child.pid, exit: child.describeExit() });
    this.fill();
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/**
 * Make Pyodide's memory snapshot once per binary (a child boots from it ~3× faster than a
 * cold load). Done in a child so the server never holds an interpreter; failure only costs
 * speed, so it returns undefined and children load cold.
 */
async function ensureSnapshot(indexDir: string, log: Logger, signal: AbortSignal): Promise<string | undefined> {
  const path = snapshotPath(indexDir);
  if (await Bun.file(path).exists()) return path;
  const startedMs = performance.now();
  const child = Bun.spawn([...selfArgv(), "__sandbox"], {
    env: { REGKB_SANDBOX_MODE: "snapshot", REGKB_SANDBOX_INDEX_DIR: indexDir },
    stdout: "pipe",
    stderr: "pipe",
    timeout: WARM_TIMEOUT_MS,
  });
  signal.addEventListener("abort", () => child.kill("SIGKILL"), { once: true });
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of child.stdout) {
    bytes += chunk.length;
    if (bytes > SNAPSHOT_BYTES_MAX) {
      child.kill("SIGKILL");
      break;
    }
    chunks.push(chunk);
  }
  const exitCode = await child.exited;
  if (signal.aborted) return undefined;
  if (exitCode !== 0 || bytes > SNAPSHOT_BYTES_MAX || bytes === 0) {
    const detail = (await new Response(child.stderr).text()).slice(-500);
    log.warn("sandbox_snapshot_failed", { exitCode, bytes, detail });
    return undefined;
  }
  const partial = `${path}.${process.pid}.partial`;
  await Bun.write(partial, Buffer.concat(chunks));
  renameSync(partial, path);
  log.info("sandbox_snapshot_made", { bytes, ms: Math.round(performance.now() - startedMs) });
  return path;
}
