import { insufficientCredit, notFound } from "../errors";
import { uuidv7 } from "../ids";
import { LEDGER_PURPOSES, ledgerKeys, type LedgerKey } from "./ledger-keys";
import * as store from "./store";
import { immediate } from "../db/transaction";
import { isRetryableConflict, isUniqueViolation, type SqlDatabase } from "../db/sql-database";
import type { LedgerEntry, LedgerEntryType } from "./store";

export type { LedgerEntry, LedgerEntryType } from "./store";

/**
 * The only code that writes money. Each function is one `BEGIN IMMEDIATE` transaction (a
 * SAVEPOINT when the caller already holds one), so "check available, then write" is atomic
 * across threads and processes; on PostgreSQL the transaction first locks the organisation's
 * totals (store.lockTotals, moneyTransaction), which makes it atomic across nodes too.
 * Amounts are integer pence signed by their effect on AVAILABLE credit (decisions.md):
 * top_up, grant, release, refunds +; reserve, settle −.
 *
 * Every write carries a unique key with its purpose (ledger-keys.ts); calling again with the
 * same key and the same content returns the entry already written instead of moving money
 * twice. Anything that would make the ledger wrong (a settle above its hold, a key reused for
 * different content, running totals that disagree with the entry just written) throws
 * LedgerInvariantError and rolls the transaction back: no entry is better than a wrong one.
 */

/** Largest amount one entry may carry (£10,000,000); the schema enforces the same bound. */
export const ENTRY_PENCE_MAX = 1_000_000_000;
export const DESCRIPTION_LENGTH_MAX = 500;
export const KEY_LENGTH_MAX = 400;
export const REF_LENGTH_MAX = 200;
export const CURRENCY = "GBP" as const;

export interface CreditBalance {
  balancePence: number;
  heldPence: number;
  availablePence: number;
  currency: typeof CURRENCY;
}

export class LedgerInvariantError extends Error {
  override name = "LedgerInvariantError";
}

/** Every write's timestamp, from the caller's clock (deps.clock.nowMs()): never the wall clock behind its back. */
interface Timed {
  nowMs: number;
}

/** An immediate charge (search, document ingestion): one negative `settle` entry, no hold. 402 when available < amount. */
export function charge(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; key: LedgerKey<"search" | "document">; description: string; ref?: string } & Timed,
): LedgerEntry {
  const amountPence = positiveAmount(input.amountPence);
  return moneyTransaction(db, input.orgId, () => {
    const existing = replayOf(db, input.key, input.orgId, "settle", -amountPence);
    if (existing) return existing;
    const before = requireAvailable(db, input.orgId, amountPence);
    return append(db, { ...input, type: "settle", amountPence: -amountPence }, before);
  });
}

/** An immediate charge that refundCharge() can take back if the work it paid for then fails. */
export interface RefundableCharge {
  entry: LedgerEntry;
  /** The key this attempt was charged under. */
  key: LedgerKey<"search">;
}

/**
 * An immediate charge (a `settle`, 402 when available < amount) for work that may still
 * fail after it, such as a search. One operation may be attempted again after a refunded
 * failure (an Idempotency-Key retry), and that attempt must pay again: attempt n, counted
 * by the refunds already written under the operation's refund key, is charged under its key
 * (n = 0) or ledgerKeys.retryOf(key, n). An attempt cut off before its refund (a crash)
 * finds its own charge on the retry instead of charging twice.
 */
export function chargeRefundable(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; key: LedgerKey<"search">; description: string; ref?: string } & Timed,
): RefundableCharge {
  return moneyTransaction(db, input.orgId, () => {
    const refunded = refundedAttempts(db, input.key);
    const key = refunded === 0 ? input.key : ledgerKeys.retryOf(input.key, refunded);
    return { entry: charge(db, { ...input, key }), key };
  });
}

/**
 * How many attempts of the operation charged under `key` were refunded. Attempt n is charged
 * only after the refunds of attempts 0 to n − 1, so the first attempt without a refund ends
 * the count: exact key lookups, right whatever order the database's collation sorts keys in.
 */
function refundedAttempts(db: SqlDatabase, key: LedgerKey<"search">): number {
  let attempt = 0;
  while (store.findEntryByKey(db, ledgerKeys.refundOf(attempt === 0 ? key : ledgerKeys.retryOf(key, attempt)).key)) attempt++;
  return attempt;
}

/**
 * Takes back a chargeRefundable() charge in full: a positive `adjustment` under
 * ledgerKeys.refundOf(its key), with the charge's ref. Calling it again returns the same entry.
 */
export function refundCharge(db: SqlDatabase, input: { charge: RefundableCharge; description: string } & Timed): LedgerEntry {
  const charged = input.charge.entry;
  if (charged.type !== "settle" || charged.amountPence >= 0 || charged.key !== input.charge.key.key) {
    throw new LedgerInvariantError(`ledger key ${input.charge.key.key} is not the charge ${charged.key}`);
  }
  return writeRefund(db, {
    orgId: charged.orgId,
    amountPence: -charged.amountPence,
    key: ledgerKeys.refundOf(input.charge.key),
    description: input.description,
    ref: charged.ref ?? undefined,
    nowMs: input.nowMs,
  });
}

/** Places a hold of amountPence for a run (ledgerKeys.runHold). 402 when available < amount. */
export function reserve(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; runId: string; description: string } & Timed,
): LedgerEntry {
  const amountPence = positiveAmount(input.amountPence);
  const key = ledgerKeys.runHold(input.runId);
  return moneyTransaction(db, input.orgId, () => {
    const existing = replayOf(db, key, input.orgId, "reserve", -amountPence);
    if (existing) return existing;
    const before = requireAvailable(db, input.orgId, amountPence);
    return append(db, { ...input, key, ref: input.runId, type: "reserve", amountPence: -amountPence }, before);
  });
}

/**
 * A run finished: charges actualPence (ledgerKeys.runSettle) and returns the whole hold
 * (ledgerKeys.runRelease) in one transaction. actualPence must not exceed the hold. A hold that is
 * already resolved (settled or released) is left alone: the call is a no-op.
 */
export function settleAndRelease(
  db: SqlDatabase,
  input: { orgId: string; runId: string; actualPence: number; description: string } & Timed,
): void {
  if (!Number.isSafeInteger(input.actualPence) || input.actualPence < 0) {
    throw new LedgerInvariantError(`actualPence must be a non-negative integer, got ${input.actualPence}`);
  }
  moneyTransaction(db, input.orgId, () => {
    const heldPence = openHold(db, input.orgId, input.runId);
    if (heldPence === null) return;
    if (input.actualPence > heldPence) {
      throw new LedgerInvariantError(`run ${input.runId}: settle of ${input.actualPence} pence exceeds its hold of ${heldPence} pence`);
    }
    // Release first: the hold returns to available before the cost is taken from it, so the
    // available ≥ 0 check holds after each statement, not only at commit.
    append(db, { ...input, key: ledgerKeys.runRelease(input.runId), ref: input.runId, type: "release", amountPence: heldPence });
    append(db, { ...input, key: ledgerKeys.runSettle(input.runId), ref: input.runId, type: "settle", amountPence: -input.actualPence });
  });
}

/** A run failed or was cancelled: returns the whole hold (ledgerKeys.runRelease), charges nothing. No-op when already resolved. */
export function release(db: SqlDatabase, input: { orgId: string; runId: string; description: string } & Timed): void {
  moneyTransaction(db, input.orgId, () => {
    const heldPence = openHold(db, input.orgId, input.runId);
    if (heldPence === null) return;
    append(db, { ...input, key: ledgerKeys.runRelease(input.runId), ref: input.runId, type: "release", amountPence: heldPence });
  });
}

/** A failed ingestion's automatic refund (ledgerKeys.documentRefund): a positive `adjustment`. Returns the existing entry when the key was used. */
export function refund(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; key: LedgerKey<"document_refund">; description: string; ref?: string } & Timed,
): LedgerEntry {
  return writeRefund(db, input);
}

function writeRefund(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; key: LedgerKey<"document_refund" | "search_refund">; description: string; ref?: string } & Timed,
): LedgerEntry {
  const amountPence = positiveAmount(input.amountPence);
  return moneyTransaction(db, input.orgId, () => {
    const existing = replayOf(db, input.key, input.orgId, "adjustment", amountPence);
    if (existing) return existing;
    return append(db, { ...input, type: "adjustment", amountPence }, requireOrganisationTotals(db, input.orgId));
  });
}

/** Credit bought (ledgerKeys.cardTopUp) or recorded by an operator (ledgerKeys.operatorTopUp). Returns the existing entry when the key was used. */
export function topUp(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; key: LedgerKey<"card_top_up" | "operator_top_up">; description: string; ref?: string } & Timed,
): LedgerEntry {
  const amountPence = positiveAmount(input.amountPence);
  return moneyTransaction(db, input.orgId, () => {
    const existing = replayOf(db, input.key, input.orgId, "top_up", amountPence);
    if (existing) return existing;
    return append(db, { ...input, type: "top_up", amountPence }, requireOrganisationTotals(db, input.orgId));
  });
}

/** The plan's monthly allowance for `month` (YYYY-MM, UTC), written at most once (ledgerKeys.monthlyGrant). */
export function grant(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; month: string } & Timed,
): { entry: LedgerEntry; created: boolean } {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(input.month)) throw new LedgerInvariantError(`month must be YYYY-MM, got ${input.month}`);
  const amountPence = positiveAmount(input.amountPence);
  const key = ledgerKeys.monthlyGrant(input.orgId, input.month);
  return moneyTransaction(db, input.orgId, () => {
    // The allowance may change between months; a grant already written stands as it was.
    const existing = store.findEntryByKey(db, key.key);
    if (existing) return { entry: sameOrganisation(existing, input.orgId), created: false };
    const description = `Monthly allowance for ${input.month}`;
    const before = requireOrganisationTotals(db, input.orgId);
    return { entry: append(db, { ...input, key, description, type: "grant", amountPence }, before), created: true };
  });
}

/**
 * An operator's signed correction with a reason. A negative adjustment may not take available
 * credit below zero (402): release holds or wait for runs to finish first.
 */
export function adjust(
  db: SqlDatabase,
  input: { orgId: string; amountPence: number; reason: string; key?: LedgerKey<"operator_adjustment"> } & Timed,
): LedgerEntry {
  const amountPence = input.amountPence;
  if (!Number.isSafeInteger(amountPence) || amountPence === 0 || Math.abs(amountPence) > ENTRY_PENCE_MAX) {
    throw new LedgerInvariantError(`adjustment must be a non-zero integer of at most ${ENTRY_PENCE_MAX} pence either way`);
  }
  const reason = input.reason.trim();
  if (reason === "") throw new LedgerInvariantError("an adjustment needs a reason");
  const key = input.key ?? ledgerKeys.operatorAdjustment();
  return moneyTransaction(db, input.orgId, () => {
    const existing = replayOf(db, key, input.orgId, "adjustment", amountPence);
    if (existing) return existing;
    const before = amountPence < 0 ? requireAvailable(db, input.orgId, -amountPence) : requireOrganisationTotals(db, input.orgId);
    return append(db, { ...input, key, description: `Operator adjustment: ${reason}`, type: "adjustment", amountPence }, before);
  });
}

/** O(1): the running totals kept beside the entries. 404 for an unknown organisation. */
export function getBalance(db: SqlDatabase, orgId: string): CreditBalance {
  const totals = requireOrganisationTotals(db, orgId);
  return { ...totals, availablePence: totals.balancePence - totals.heldPence, currency: CURRENCY };
}

export interface LedgerVerification {
  organisations: number;
  entries: number;
  mismatches: { orgId: string; problem: string }[];
  holdProblems: store.HoldProblem[];
  ok: boolean;
}

export const VERIFY_PROBLEMS_MAX = 1_000;

/** Recomputes every organisation's totals and hold pairing from the entries alone. */
export function verifyLedger(db: SqlDatabase): LedgerVerification {
  // One read transaction: a consistent snapshot even while a server writes (WAL).
  return db.transaction(() => {
    const totals = store.recomputeTotals(db);
    return verificationOf(totals, store.findHoldProblems(db, VERIFY_PROBLEMS_MAX), store.countEntries(db));
  }).deferred();
}

/** The verdict over recomputed totals and hold problems, whichever engine computed them (verify-postgres.ts). */
export function verificationOf(totals: store.RecomputedTotals[], holdProblems: store.HoldProblem[], entries: number): LedgerVerification {
  const mismatches: LedgerVerification["mismatches"] = [];
  for (const t of totals) {
    if (t.storedBalancePence === null || t.storedHeldPence === null) {
      mismatches.push({ orgId: t.orgId, problem: "no stored credit balance" });
      continue;
    }
    if (t.storedBalancePence !== t.balancePence || t.storedHeldPence !== t.heldPence) {
      mismatches.push({
        orgId: t.orgId,
        problem: `stored balance ${t.storedBalancePence}/held ${t.storedHeldPence}, entries give ${t.balancePence}/${t.heldPence}`,
      });
    }
    if (t.balancePence - t.heldPence < 0 || t.heldPence < 0) {
      mismatches.push({ orgId: t.orgId, problem: `entries give available ${t.balancePence - t.heldPence}, held ${t.heldPence}` });
    }
    if (mismatches.length >= VERIFY_PROBLEMS_MAX) break;
  }
  return {
    organisations: totals.length,
    entries,
    mismatches,
    holdProblems,
    ok: mismatches.length === 0 && holdProblems.length === 0,
  };
}

// ——— internals ———

/** Runs of one movement at most: each retry follows a conflict another node's movement won. */
const MONEY_ATTEMPTS_MAX = 5;

/**
 * `fn` in one immediate transaction that first locks the organisation's totals. On
 * PostgreSQL, a movement that lost a race to another node (a deadlock, a serialisation
 * failure, or the other node's entry under the same key committed first) is rolled back
 * and run again from the start, when it finds that entry as a replay: the same result as on
 * SQLite, never a second entry. Inside a caller's transaction the conflict is the caller's
 * to retry, since only the whole transaction can run again.
 */
function moneyTransaction<T>(db: SqlDatabase, orgId: string, fn: () => T): T {
  const outermost = !db.inTransaction;
  for (let attempt = 1; ; attempt++) {
    try {
      return immediate(db, () => {
        store.lockTotals(db, orgId);
        return fn();
      });
    } catch (error) {
      const conflict = isRetryableConflict(error) || isUniqueViolation(error);
      if (!outermost || !conflict || attempt >= MONEY_ATTEMPTS_MAX) throw error;
    }
  }
}

function positiveAmount(amountPence: number): number {
  if (!Number.isSafeInteger(amountPence) || amountPence < 1 || amountPence > ENTRY_PENCE_MAX) {
    throw new LedgerInvariantError(`amountPence must be an integer from 1 to ${ENTRY_PENCE_MAX}, got ${amountPence}`);
  }
  return amountPence;
}

function requireOrganisationTotals(db: SqlDatabase, orgId: string): store.Totals {
  const totals = store.readTotals(db, orgId);
  if (!totals) throw notFound(`organisation ${orgId} does not exist`);
  return totals;
}

function requireAvailable(db: SqlDatabase, orgId: string, requiredPence: number): store.Totals {
  const totals = requireOrganisationTotals(db, orgId);
  const availablePence = totals.balancePence - totals.heldPence;
  if (availablePence < requiredPence) throw insufficientCredit(availablePence, requiredPence);
  return totals;
}

function sameOrganisation(entry: LedgerEntry, orgId: string): LedgerEntry {
  if (entry.orgId !== orgId) throw new LedgerInvariantError(`ledger key ${entry.key} belongs to another organisation`);
  return entry;
}

/** The entry already written under `key`, if it is this very write; a different write under the same key is a bug. */
function replayOf(db: SqlDatabase, key: LedgerKey, orgId: string, type: LedgerEntryType, amountPence: number): LedgerEntry | null {
  const existing = store.findEntryByKey(db, key.key);
  if (!existing) return null;
  sameOrganisation(existing, orgId);
  if (existing.type !== type || existing.amountPence !== amountPence || existing.purpose !== key.purpose) {
    throw new LedgerInvariantError(
      `ledger key ${key.key} already holds a ${existing.purpose} ${existing.type} of ${existing.amountPence} pence, not a ${key.purpose} ${type} of ${amountPence}`,
    );
  }
  return existing;
}

/** The pence still held for a run, or null when its hold is already resolved. No hold at all is a bug. */
function openHold(db: SqlDatabase, orgId: string, runId: string): number | null {
  const hold = store.findEntryByKey(db, ledgerKeys.runHold(runId).key);
  if (!hold) throw new LedgerInvariantError(`run ${runId} has no hold to resolve`);
  sameOrganisation(hold, orgId);
  if (store.findEntryByKey(db, ledgerKeys.runRelease(runId).key)) return null;
  if (store.findEntryByKey(db, ledgerKeys.runSettle(runId).key)) throw new LedgerInvariantError(`run ${runId} was settled without its release`);
  return -hold.amountPence;
}

function clip(text: string, max: number, what: string): string {
  const trimmed = text.trim();
  if (trimmed === "") throw new LedgerInvariantError(`${what} must not be empty`);
  const codePoints = Array.from(trimmed);
  // Descriptions are for people; a long filename inside one is shortened rather than refused.
  return codePoints.length <= max ? trimmed : `${codePoints.slice(0, max - 1).join("")}…`;
}

/** Writes one entry, then checks the running totals moved by exactly that entry. `before`: totals read in this transaction. */
function append(
  db: SqlDatabase,
  input: { orgId: string; type: LedgerEntryType; amountPence: number; key: LedgerKey; description: string; ref?: string; nowMs: number },
  before: store.Totals = requireOrganisationTotals(db, input.orgId),
): LedgerEntry {
  const { key, purpose } = input.key;
  if (key.length < 1 || key.length > KEY_LENGTH_MAX) throw new LedgerInvariantError(`ledger key must be 1 to ${KEY_LENGTH_MAX} characters`);
  if (LEDGER_PURPOSES[purpose] !== input.type) throw new LedgerInvariantError(`ledger key ${key} is for a ${purpose}, not a ${input.type}`);
  if (input.ref !== undefined && (input.ref.length < 1 || input.ref.length > REF_LENGTH_MAX)) {
    throw new LedgerInvariantError(`ledger ref must be 1 to ${REF_LENGTH_MAX} characters`);
  }
  const entry: LedgerEntry = {
    id: uuidv7(),
    orgId: input.orgId,
    type: input.type,
    amountPence: input.amountPence,
    currency: CURRENCY,
    description: clip(input.description, DESCRIPTION_LENGTH_MAX, "description"),
    key,
    purpose,
    ref: input.ref ?? null,
    createdAtMs: input.nowMs,
  };
  store.insertEntry(db, entry);
  const after = requireOrganisationTotals(db, input.orgId);
  const holdType = entry.type === "reserve" || entry.type === "release";
  const expectedBalance = before.balancePence + (holdType ? 0 : entry.amountPence);
  const expectedHeld = before.heldPence - (holdType ? entry.amountPence : 0);
  if (after.balancePence !== expectedBalance || after.heldPence !== expectedHeld || after.balancePence - after.heldPence < 0) {
    throw new LedgerInvariantError(
      `running totals for ${input.orgId} are ${after.balancePence}/${after.heldPence} after ${entry.type} ${entry.amountPence}, expected ${expectedBalance}/${expectedHeld}`,
    );
  }
  return entry;
}
