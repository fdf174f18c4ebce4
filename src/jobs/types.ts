import type { SqlDatabase } from "../db/sql-database";

export type RunStatus = "pending" | "running" | "completed" | "failed";

/** One durable background run (a screening, a document ingestion, an execution). */
export interface Run<Input = unknown, Output = unknown> {
  id: string;
  orgId: string;
  kind: string;
  status: RunStatus;
  input: Input;
  /** Set once the run has completed. */
  output: Output | null;
  /** Set once the run has failed; safe to show to the organisation. */
  error: string | null;
  /** Claims so far, including the current one; capped at the kind's maxAttempts. */
  attempts: number;
  createdAtMs: number;
  /** When the latest attempt was claimed. */
  startedAtMs: number | null;
  completedAtMs: number | null;
}

/**
 * What a capability registers for its kind of run. The engine claims a run, calls
 * `execute`, then commits the outcome in one transaction together with `onCompleted`
 * or `onFailed`, which is where the money moves (settle / release / refund). A run is
 * executed at least once: after a crash it is executed again, but its outcome and its
 * money are committed exactly once (the status change is conditional on still holding
 * the lease, and every ledger step has a unique key).
 */
export interface RunKindSpec<Input = unknown, Output = unknown, Db extends SqlDatabase = SqlDatabase> {
  kind: string;
  /** Runs of this kind executing at once in this process. */
  concurrency: number;
  /** Claims before a run whose worker keeps dying is failed; defaults to REGKB_RUN_MAX_ATTEMPTS. */
  maxAttempts?: number;
  /** Wall-clock bound on one attempt; defaults to RUN_TIMEOUT_MS_DEFAULT. */
  timeoutMs?: number;
  /**
   * Does the work and returns the output (stored as JSON). CPU-heavy work belongs in a
   * Worker or child process, or must yield to the event loop often: lease renewal and
   * HTTP share this thread. `signal` aborts on shutdown, timeout or a lost lease; the
   * result of an aborted attempt is ignored. Throw RunFailure for a message the
   * organisation may see; any other error is recorded as a generic internal failure.
   */
  execute(run: Run<Input, Output>, signal: AbortSignal): Promise<Output>;
  /** Runs inside the transaction that marks the run completed; throwing fails the run instead. */
  onCompleted(db: Db, run: Run<Input, Output>, output: Output): void;
  /** Runs inside the transaction that marks the run failed (release the hold, refund). */
  onFailed(db: Db, run: Run<Input, Output>, error: string): void;
}

/** A failure whose message is meant for the organisation (stored in the run's `error`). */
export class RunFailure extends Error {
  override readonly name = "RunFailure";
}
