import { charge, release, reserve, settleAndRelease } from "../billing/ledger";
import type { LedgerKey } from "../billing/ledger-keys";
import type { Clock } from "../clock";
import { isPostgres, isRetryableConflict, isUniqueViolation, type SqlDatabase } from "../db/sql-database";
import { immediate } from "../db/transaction";
import { createRun, findRun } from "./store";
import type { Run } from "./types";

/** What creating a paid run needs: the database, the clock, and the engine to wake after commit. */
export interface PaidRunDeps<Db extends SqlDatabase = SqlDatabase> {
  db: Db;
  clock: Clock;
  jobs: { wake(kind: string): void };
}

/** How a run kind paid by a hold prices and names its money. */
export interface ReservedRunKindSpec<Input, Output> {
  kind: string;
  /** The worst case, held when the run is created. */
  holdPence(input: Input): number;
  /** What the completed run costs; never above its hold. */
  actualPence(run: Run<Input, Output>, output: Output): number;
  /** The ledger descriptions of the hold, the settlement and the release. */
  describe: {
    hold(id: string, input: Input): string;
    completed(run: Run<Input, Output>, output: Output): string;
    failed(run: Run<Input, Output>): string;
  };
}

/** A run kind paid by a hold: create (hold + run), settle on completion, release on failure. */
export interface ReservedRunKind<Input, Output> {
  kind: string;
  /**
   * Holds the run's worst-case cost and creates the run in one transaction: a 402 leaves
   * nothing behind and a hold never exists without its run. `id` is the request's operation
   * id (fixed per Idempotency-Key), so a retry after a crash between commit and response finds
   * the run and its hold instead of creating them again. Wakes the kind's workers after commit.
   */
  create(deps: PaidRunDeps, run: { id: string; orgId: string; input: Input }): { estimatedCostPence: number };
  /** For RunKindSpec.onCompleted: charges actualPence and returns the hold, in the engine's transaction. */
  settle(db: SqlDatabase, run: Run<Input, Output>, output: Output, nowMs: number): void;
  /** For RunKindSpec.onFailed: returns the hold, charging nothing. */
  release(db: SqlDatabase, run: Run<Input, Output>, nowMs: number): void;
}

export function reservedRunKind<Input, Output>(spec: ReservedRunKindSpec<Input, Output>): ReservedRunKind<Input, Output> {
  return {
    kind: spec.kind,
    create(deps, run) {
      const holdPence = spec.holdPence(run.input);
      const nowMs = deps.clock.nowMs();
      creatingTransaction(deps.db, () => {
        if (findRun(deps.db, { id: run.id, orgId: run.orgId, kind: spec.kind })) return;
        reserve(deps.db, { orgId: run.orgId, runId: run.id, amountPence: holdPence, description: spec.describe.hold(run.id, run.input), nowMs });
        createRun(deps.db, { id: run.id, orgId: run.orgId, kind: spec.kind, input: run.input, createdAtMs: nowMs });
      });
      deps.jobs.wake(spec.kind);
      return { estimatedCostPence: holdPence };
    },
    settle(db, run, output, nowMs) {
      const actualPence = spec.actualPence(run, output);
      settleAndRelease(db, { orgId: run.orgId, runId: run.id, actualPence, description: spec.describe.completed(run, output), nowMs });
    },
    release(db, run, nowMs) {
      release(db, { orgId: run.orgId, runId: run.id, description: spec.describe.failed(run), nowMs });
    },
  };
}

/**
 * Charges up front and creates the run in one transaction (with `alongside`, the
 * capability's own rows): a 402 leaves nothing behind and a charge never exists without
 * its run. Wakes the kind's workers after commit. Returns what `alongside` returns.
 */
export function createChargedRun<Input, T, Db extends SqlDatabase>(
  deps: PaidRunDeps<Db>,
  run: {
    id: string;
    orgId: string;
    kind: string;
    input: Input;
    charge: { amountPence: number; key: LedgerKey<"document">; description: string; ref: string };
    alongside: (db: Db, nowMs: number) => T;
  },
): T {
  const nowMs = deps.clock.nowMs();
  const result = creatingTransaction(deps.db, () => {
    charge(deps.db, { orgId: run.orgId, ...run.charge, nowMs });
    const value = run.alongside(deps.db, nowMs);
    createRun(deps.db, { id: run.id, orgId: run.orgId, kind: run.kind, input: run.input, createdAtMs: nowMs });
    return value;
  });
  deps.jobs.wake(run.kind);
  return result;
}

/** Runs of one creating transaction at most: each retry follows a race another node won. */
const CREATE_ATTEMPTS_MAX = 5;

/**
 * `fn` in one immediate transaction. On PostgreSQL, one that lost a race to another node
 * (the same run created there first: 23505; a deadlock or serialisation failure) is rolled
 * back and run again, when it finds the other node's run: the result SQLite gives, where
 * BEGIN IMMEDIATE makes creations take turns. Inside a caller's transaction the conflict
 * is the caller's to retry.
 */
function creatingTransaction<T>(db: SqlDatabase, fn: () => T): T {
  const outermost = !db.inTransaction;
  for (let attempt = 1; ; attempt++) {
    try {
      return immediate(db, fn);
    } catch (error) {
      const conflict = isRetryableConflict(error) || isUniqueViolation(error);
      if (!outermost || !conflict || !isPostgres(db) || attempt >= CREATE_ATTEMPTS_MAX) throw error;
    }
  }
}
