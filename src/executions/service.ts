import { executionCostPence, executionReservePence } from "../billing/pricing";
import type { Config } from "../config";
import type { SqlDatabase } from "../db/sql-database";
import { notFound, Refusal } from "../errors";
import { isUuid } from "../ids";
import { reservedRunKind, type PaidRunDeps } from "../jobs/paid-run";
import { findRun } from "../jobs/store";
import { RunFailure, type Run, type RunKindSpec, type RunStatus } from "../jobs/types";
import type { Logger } from "../log";
import { SandboxInfraError, type ExecutionResult, type SandboxPool } from "./sandbox/pool";

export const EXECUTION_RUN_KIND = "execution";
export const EXECUTION_CODE_CHARS_MAX = 65_536;
export const EXECUTION_TIMEOUT_SECONDS_MIN = 1;
export const EXECUTION_TIMEOUT_SECONDS_MAX = 300;
export const EXECUTION_TIMEOUT_SECONDS_DEFAULT = 60;
/**
 * One attempt may wait for a warm child (the pool's acquire bound, 180 s) and then run to
 * its deadline; the engine's own attempt limit sits above both so only the pool times out code.
 */
const EXECUTION_ATTEMPT_MS_MAX = (EXECUTION_TIMEOUT_SECONDS_MAX + 180 + 60) * 1000;

/** What executions use: paid runs, the sandbox pool, the log and one setting. */
export interface ExecutionDeps extends PaidRunDeps {
  config: Pick<Config, "executionConcurrency">;
  sandbox: Pick<SandboxPool, "available" | "unavailableReason" | "run">;
  log: Logger;
}

export interface ExecutionInput {
  code: string;
  timeoutSeconds: number;
}

export type ExecutionOutput = ExecutionResult;

export interface Execution {
  id: string;
  status: RunStatus;
  exitCode: number | null;
  stdout: string | null;
  stderr: string | null;
  durationMs: number | null;
  error: string | null;
  createdAtMs: number;
  completedAtMs: number | null;
}

/** Holds the worst case; settles the wall-clock cost on completion, releases it all on failure. */
const executionMoney = reservedRunKind<ExecutionInput, ExecutionOutput>({
  kind: EXECUTION_RUN_KIND,
  holdPence: (input) => executionReservePence(input.timeoutSeconds),
  actualPence: (run, output) => executionCostPence(output.durationMs, run.input.timeoutSeconds),
  describe: {
    hold: (id, input) => `execution ${id}: hold for up to ${input.timeoutSeconds} s`,
    completed: (run, output) => `execution ${run.id} completed in ${output.durationMs} ms (exit ${output.exitCode})`,
    failed: (run) => `execution ${run.id} failed: hold returned, nothing charged`,
  },
});

/**
 * Holds the worst case (5p + 1p × timeoutSeconds) with the run. 503
 * first when this host cannot sandbox code, so nothing is held for a run that could never start.
 */
export function createExecution(
  deps: ExecutionDeps,
  orgId: string,
  id: string,
  request: { code: string; timeoutSeconds?: number },
): { id: string; status: "pending"; estimatedCostPence: number } {
  if (!deps.sandbox.available) {
    throw new Refusal("sandbox_unavailable", deps.sandbox.unavailableReason ?? "the sandbox is unavailable");
  }
  const input: ExecutionInput = { code: request.code, timeoutSeconds: request.timeoutSeconds ?? EXECUTION_TIMEOUT_SECONDS_DEFAULT };
  const { estimatedCostPence } = executionMoney.create(deps, { id, orgId, input });
  return { id, status: "pending", estimatedCostPence };
}

/** The organisation's execution; an unknown, malformed or another organisation's id is 404. */
export function getExecution(deps: { db: SqlDatabase }, orgId: string, id: string): Execution {
  const run = isUuid(id) ? (findRun(deps.db, { id, orgId, kind: EXECUTION_RUN_KIND }) as Run<ExecutionInput, ExecutionOutput> | undefined) : undefined;
  if (!run) throw notFound(`execution ${id.slice(0, 64)} does not exist`);
  return {
    id: run.id,
    status: run.status,
    exitCode: run.output?.exitCode ?? null,
    stdout: run.output?.stdout ?? null,
    stderr: run.output?.stderr ?? null,
    durationMs: run.output?.durationMs ?? null,
    error: run.error,
    createdAtMs: run.createdAtMs,
    completedAtMs: run.completedAtMs,
  };
}

/**
 * Runs the code in a fresh sandbox child. Whatever the code does (non-zero exit, timeout
 * 124, a crash it provoked) completes the run and is charged by wall-clock time; only a
 * platform failure before the code started fails it, uncharged.
 */
export function executionRunKind(deps: ExecutionDeps): RunKindSpec<ExecutionInput, ExecutionOutput> {
  return {
    kind: EXECUTION_RUN_KIND,
    concurrency: deps.config.executionConcurrency,
    timeoutMs: EXECUTION_ATTEMPT_MS_MAX,
    async execute(run, signal) {
      try {
        return await deps.sandbox.run(run.input.code, run.input.timeoutSeconds * 1000, signal);
      } catch (error) {
        if (!(error instanceof SandboxInfraError)) throw error;
        // Details (paths, child stderr) stay in the log; the organisation gets the meaning.
        deps.log.error("execution_sandbox_failed", { runId: run.id, reason: error.message.slice(0, 1000) });
        throw new RunFailure("the sandbox failed before the code ran; nothing was charged");
      }
    },
    onCompleted: (db, run, output) => executionMoney.settle(db, run, output, deps.clock.nowMs()),
    onFailed: (db, run) => executionMoney.release(db, run, deps.clock.nowMs()),
  };
}
