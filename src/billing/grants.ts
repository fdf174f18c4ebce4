import type { SqlDatabase } from "../db/sql-database";
import type { Clock } from "../clock";
import type { Logger } from "../log";
import { grant } from "./ledger";
import { ledgerKeys } from "./ledger-keys";
import { findOrganisationsDueAllowance, readAllowance } from "./store";

/** What monthly allowances use. */
export interface GrantDeps {
  db: SqlDatabase;
  clock: Clock;
  log: Logger;
}

/** Organisations checked per tick; the rest wait for the next tick (a minute later). */
export const GRANT_TICK_BATCH_MAX = 1_000;
/** Bound on the per-process "already checked this month" cache. */
const CHECKED_ORGS_MAX = 100_000;

/** Calendar month in UTC, the unit of the allowance: "2025-03". */
export function monthOf(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 7);
}

/**
 * Writes this month's allowance for one organisation if its plan has one and it is not
 * written yet. The ledger key grant:<org>:<YYYY-MM> makes a second write impossible, whoever
 * races (request path, tick, another process). Returns whether this call wrote it.
 */
export function grantMonthlyAllowance(deps: GrantDeps, orgId: string): boolean {
  const month = monthOf(deps.clock.nowMs());
  const row = readAllowance(deps.db, orgId, ledgerKeys.monthlyGrant(orgId, month).key);
  if (!row || row.allowancePence <= 0 || row.granted) return false;
  return grant(deps.db, { orgId, amountPence: row.allowancePence, month, nowMs: deps.clock.nowMs() }).created;
}

/** Grants every allowance due this month (a batch per call). Returns how many were written. */
export function grantDueAllowances(deps: GrantDeps, batchMax = GRANT_TICK_BATCH_MAX): number {
  const month = monthOf(deps.clock.nowMs());
  let written = 0;
  for (const id of findOrganisationsDueAllowance(deps.db, month, batchMax)) if (grantMonthlyAllowance(deps, id)) written++;
  return written;
}

const checkedByDeps = new WeakMap<GrantDeps, Map<string, string>>();

/**
 * Called on every authenticated request: an in-memory "checked this month" per organisation
 * keeps it to a Map lookup after the first request of the month. A failure is logged, not
 * raised: the request goes on and the periodic tick writes the grant.
 */
export function grantOnRequest(deps: GrantDeps, orgId: string): void {
  const month = monthOf(deps.clock.nowMs());
  let checked = checkedByDeps.get(deps);
  if (!checked) checkedByDeps.set(deps, (checked = new Map()));
  if (checked.get(orgId) === month) return;
  try {
    grantMonthlyAllowance(deps, orgId);
  } catch (error) {
    deps.log.warn("allowance_grant_failed", { orgId, message: error instanceof Error ? error.message.slice(0, 200) : String(error) });
    return;
  }
  if (checked.size >= CHECKED_ORGS_MAX) checked.clear();
  checked.set(orgId, month);
}
