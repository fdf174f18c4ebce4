import { reserve } from "../billing/ledger";
import type { Deps } from "../deps";
import { createRun, findRun } from "./store";

/**
 * Holds the run's worst-case cost and creates the run in one transaction: a 402 leaves
 * nothing behind and a hold never exists without its run. `id` is the request's operation
 * id (fixed per Idempotency-Key), so a retry after a crash between commit and response finds
 * the run and its hold instead of creating them again. Wakes the kind's workers after commit.
 */
export function createReservedRun(
  deps: Deps,
  run: { id: string; orgId: string; kind: string; input: unknown; holdPence: number; holdDescription: string },
): void {
  const nowMs = deps.clock.nowMs();
  deps.db
    .transaction(() => {
      if (findRun(deps.db, { id: run.id, orgId: run.orgId, kind: run.kind })) return;
      reserve(deps.db, { orgId: run.orgId, runId: run.id, amountPence: run.holdPence, description: run.holdDescription, nowMs });
      createRun(deps.db, { id: run.id, orgId: run.orgId, kind: run.kind, input: run.input, createdAtMs: nowMs });
    })
    .immediate();
  deps.jobs.wake(run.kind);
}
