import type { Clock } from "../clock";
import type { Config } from "../config";
import type { Logger } from "../log";
import { validationFailed } from "../errors";
import { uuidv7 } from "../ids";
import { topUp } from "./ledger";
import { ledgerKeys } from "./ledger-keys";
import { paymentsUnavailable, type CheckoutSession, type PaymentEvent, type PaymentProvider } from "./payments";
import * as store from "./store";
import { immediate } from "../db/transaction";
import { forUpdate, isRetryableConflict, isUniqueViolation, type SqlDatabase } from "../db/sql-database";

/** What top-ups and the payment webhook use. */
export interface TopUpDeps {
  db: SqlDatabase;
  clock: Clock;
  log: Logger;
  config: Pick<Config, "publicUrl">;
  payments: PaymentProvider;
}

export const TOP_UP_PENCE_MIN = 1_000;
export const TOP_UP_PENCE_MAX = 100_000;
/** Webhook payloads are a few KiB; anything far larger is not one. */
export const WEBHOOK_BODY_BYTES_MAX = 1024 * 1024;
/** Processed event ids are kept well past Stripe's three days of redelivery (table stripe_events). */
export const STRIPE_EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
/** Runs of one event's transaction when it loses a race between nodes (PostgreSQL); the rerun finds the winner's record. */
const EVENT_ATTEMPTS_MAX = 5;

/** Another node recorded the same event id while this transaction decided it: roll back and answer as a redelivery. */
class EventRecordedMeanwhile extends Error {}

export interface TopUpCheckout {
  orderId: string;
  checkoutUrl: string;
  amountPence: number;
}

/**
 * Records an order and creates its hosted checkout. Nothing is credited here: only the
 * verified webhook credits. `orderId` is the request's operationId, so a retried request
 * finds its order and the provider (same order id) returns the same session.
 */
export async function createTopUp(deps: TopUpDeps, input: { orgId: string; amountPence: number; orderId?: string }): Promise<TopUpCheckout> {
  if (!deps.payments.checkoutAvailable()) throw paymentsUnavailable("no payment provider is configured; an operator can credit the account instead");
  const { amountPence } = input;
  if (!Number.isSafeInteger(amountPence) || amountPence < TOP_UP_PENCE_MIN || amountPence > TOP_UP_PENCE_MAX) {
    throw validationFailed(`body.amountPence: must be an integer from ${TOP_UP_PENCE_MIN} to ${TOP_UP_PENCE_MAX}`);
  }
  const orderId = input.orderId ?? uuidv7();
  const existing = store.findOrder(deps.db, orderId);
  if (existing && (existing.orgId !== input.orgId || existing.amountPence !== amountPence)) {
    throw new Error(`top-up order ${orderId} already exists with other content`);
  }
  if (existing?.status === "pending" && existing.checkoutUrl) return { orderId, checkoutUrl: existing.checkoutUrl, amountPence };
  if (!existing) {
    const nowMs = deps.clock.nowMs();
    store.insertOrder(deps.db, {
      id: orderId,
      orgId: input.orgId,
      amountPence,
      currency: "GBP",
      status: "creating",
      checkoutSessionId: null,
      checkoutUrl: null,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    });
  }
  const returnUrl = (outcome: string) => `${deps.config.publicUrl}/top-up?order=${orderId}&outcome=${outcome}`;
  let session: CheckoutSession;
  try {
    session = await deps.payments.createCheckout({
      orderId,
      orgId: input.orgId,
      amountPence,
      successUrl: returnUrl("success"),
      cancelUrl: returnUrl("cancelled"),
    });
  } catch (error) {
    store.setOrderStatus(deps.db, orderId, "failed", deps.clock.nowMs());
    throw error;
  }
  store.setOrderCheckout(deps.db, orderId, session.sessionId, session.url, deps.clock.nowMs());
  return { orderId, checkoutUrl: session.url, amountPence };
}

/**
 * POST /v1/webhooks/stripe: verify, then apply the event once. Returns what happened, for
 * the response body and the log. Bad signature → 400 and nothing recorded.
 */
export async function handlePaymentWebhook(deps: TopUpDeps, rawBody: string, signature: string | null): Promise<string> {
  const event = await deps.payments.parseWebhook(rawBody, signature, deps.clock.nowMs());
  const outcome = applyPaymentEvent(deps, event);
  deps.log.info(`${deps.payments.name}_webhook`, { eventId: event.eventId, type: event.type, outcome });
  return outcome;
}

/**
 * One transaction per event: a redelivered event id is answered from stripe_events; a new
 * one is applied and recorded together. Credit is one top_up per order (key topup:<orderId>)
 * for the stored order's amount, so any number of deliveries, in any order, of paid checkout
 * events credit once. On PostgreSQL two nodes may receive one event at once: the one that
 * records it second rolls back and runs again (as after a deadlock or serialisation failure),
 * and answers as a redelivery, as on SQLite where the two take turns.
 */
export function applyPaymentEvent(deps: TopUpDeps, event: PaymentEvent): string {
  for (let attempt = 1; ; attempt++) {
    try {
      return applyPaymentEventOnce(deps, event);
    } catch (error) {
      const conflict = error instanceof EventRecordedMeanwhile || isRetryableConflict(error) || isUniqueViolation(error);
      if (deps.db.inTransaction || !conflict || attempt >= EVENT_ATTEMPTS_MAX) throw error;
    }
  }
}

function applyPaymentEventOnce(deps: TopUpDeps, event: PaymentEvent): string {
  const db = deps.db;
  return immediate(db, () => {
    const previous = store.findStripeEventOutcome(db, event.eventId);
    if (previous !== null) return `duplicate event (${previous})`;
    const nowMs = deps.clock.nowMs();
    const { outcome, orderId } = decide(deps, event, nowMs);
    const recorded = store.recordStripeEvent(db, { id: event.eventId, type: event.type, orderId, outcome, receivedAtMs: nowMs });
    if (!recorded) throw new EventRecordedMeanwhile(`event ${event.eventId} was recorded by another node`);
    return outcome;
  });
}

function decide(deps: TopUpDeps, event: PaymentEvent, nowMs: number): { outcome: string; orderId: string | null } {
  if (event.kind !== "checkout") return { outcome: "ignored: not a checkout event", orderId: null };
  // Locked (PostgreSQL): another node's event for this order waits, then sees its credit and status.
  const lock = forUpdate(deps.db);
  const order = (event.orderId ? store.findOrder(deps.db, event.orderId, lock) : null) ?? store.findOrderBySession(deps.db, event.sessionId, lock);
  if (!order) return { outcome: "ignored: unknown order", orderId: null };
  if (order.checkoutSessionId !== null && order.checkoutSessionId !== event.sessionId) {
    deps.log.warn(`${deps.payments.name}_webhook_session_mismatch`, { orderId: order.id, eventId: event.eventId });
    return { outcome: "ignored: session does not match the order", orderId: order.id };
  }
  if (event.status === "paid") {
    if (event.amountPence !== null && event.amountPence !== order.amountPence) {
      // Credit follows the stored order, never the event; a disagreement is worth a look.
      deps.log.warn(`${deps.payments.name}_webhook_amount_mismatch`, { orderId: order.id, eventId: event.eventId });
    }
    const key = ledgerKeys.cardTopUp(order.id);
    const already = store.findEntryByKey(deps.db, key.key) !== null;
    topUp(deps.db, {
      orgId: order.orgId,
      amountPence: order.amountPence,
      key,
      ref: order.id,
      description: `Card top-up (order ${order.id})`,
      nowMs,
    });
    store.setOrderStatus(deps.db, order.id, "paid", nowMs);
    return { outcome: already ? "already credited" : "credited", orderId: order.id };
  }
  if (event.status === "awaiting_payment") return { outcome: "awaiting payment", orderId: order.id };
  if (event.status === "failed") {
    store.setOrderStatus(deps.db, order.id, "failed", nowMs);
    return { outcome: "payment failed", orderId: order.id };
  }
  store.setOrderStatus(deps.db, order.id, "expired", nowMs);
  return { outcome: "checkout expired", orderId: order.id };
}
