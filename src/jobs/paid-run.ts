import type { Database } from "bun:sqlite";
import { charge, release, reserve, settleAndRelease } from "../billing/ledger";
import type { LedgerKey } from "../billing/ledger-keys";
import type { Clock } from "../clock";
import { immediate } from "../db/transaction";
import { createRun, findRun } from "./store";
import type { Run } from "./types";

/** What creating a paid run needs: the database, the clock, and the engine to wake after commit. */
export interface PaidRunDeps {
  db: Database;
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
  settle(db: Database, run: Run<Input, Output>, output: Output, nowMs: number): void;
  /** For RunKindSpec.onFailed: returns the hold, charging nothing. */
  release(db: Database, run: Run<Input, Output>, nowMs: number): void;
}

export function reservedRunKind<Input, Output>(spec: ReservedRunKindSpec<Input, Output>): ReservedRunKind<Input, Output> {
  return {
    kind: spec.kind,
    create(deps, run) {
      const holdPence = spec.holdPence(run.input);
      const nowMs = deps.clock.nowMs();
      immediate(deps.db, () => {
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
export function createChargedRun<Input, T>(
  deps: PaidRunDeps,
  run: {
    id: string;
    orgId: string;
    kind: string;
    input: Input;
    charge: { amountPence: number; key: LedgerKey<"document">; description: string; ref: string };
    alongside: (db: Database, nowMs: number) => T;
  },
): T {
  const nowMs = deps.clock.nowMs();
  const result = immediate(deps.db, () => {
    charge(deps.db, { orgId: run.orgId, ...run.charge, nowMs });
    const value = run.alongside(deps.db, nowMs);
    createRun(deps.db, { id: run.id, orgId: run.orgId, kind: run.kind, input: run.input, createdAtMs: nowMs });
    return value;
  });
  deps.jobs.wake(run.kind);
  return result;
}
