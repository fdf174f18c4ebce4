import { requireOrganisation } from "../auth/service";
import type { SqlDatabase } from "../db/sql-database";
import type { Clock } from "../clock";
import { validationFailed } from "../errors";
import { adjust, ENTRY_PENCE_MAX, LedgerInvariantError, topUp, type LedgerEntry } from "./ledger";
import { ledgerKeys } from "./ledger-keys";
import { findEntryByKey } from "./store";

/** What operator credits and adjustments use. */
export interface OperatorDeps {
  db: SqlDatabase;
  clock: Clock;
}

export const OPERATOR_REFERENCE_LENGTH_MAX = 100;
export const ADJUSTMENT_REASON_LENGTH_MAX = 200;

/**
 * Credit recorded by an operator (bank transfer, invoice, air-gapped install): a `top_up`
 * whose description says so. With a reference the call is idempotent: the same reference
 * and amount return the entry already written; the same reference with another amount is refused.
 */
export function recordOperatorTopUp(
  deps: OperatorDeps,
  input: { orgId: string; amountPence: number; reference?: string },
): { entry: LedgerEntry; created: boolean } {
  requireOrganisation(deps, input.orgId);
  if (!Number.isSafeInteger(input.amountPence) || input.amountPence < 1 || input.amountPence > ENTRY_PENCE_MAX) {
    throw validationFailed(`amount must be an integer from 1 to ${ENTRY_PENCE_MAX} pence`);
  }
  const reference = input.reference?.trim();
  if (reference !== undefined && (reference.length < 1 || reference.length > OPERATOR_REFERENCE_LENGTH_MAX)) {
    throw validationFailed(`reference must be 1 to ${OPERATOR_REFERENCE_LENGTH_MAX} characters`);
  }
  const key = ledgerKeys.operatorTopUp(input.orgId, reference);
  const existing = findEntryByKey(deps.db, key.key);
  if (existing && existing.amountPence !== input.amountPence) {
    throw validationFailed(`reference ${reference} was already recorded for ${existing.amountPence} pence`);
  }
  const entry = topUp(deps.db, {
    orgId: input.orgId,
    amountPence: input.amountPence,
    key,
    ref: reference,
    description: reference ? `Top-up recorded by an operator (reference ${reference})` : "Top-up recorded by an operator",
    nowMs: deps.clock.nowMs(),
  });
  return { entry, created: existing === null };
}

/** A signed correction with a reason; nothing is ever edited or deleted. */
export function recordAdjustment(deps: OperatorDeps, input: { orgId: string; amountPence: number; reason: string }): LedgerEntry {
  requireOrganisation(deps, input.orgId);
  const reason = input.reason.trim();
  if (reason.length < 1 || reason.length > ADJUSTMENT_REASON_LENGTH_MAX) {
    throw validationFailed(`reason must be 1 to ${ADJUSTMENT_REASON_LENGTH_MAX} characters`);
  }
  try {
    return adjust(deps.db, { orgId: input.orgId, amountPence: input.amountPence, reason, nowMs: deps.clock.nowMs() });
  } catch (error) {
    if (error instanceof LedgerInvariantError) throw validationFailed(error.message);
    throw error;
  }
}
