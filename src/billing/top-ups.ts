import type Stripe from "stripe";
import type { Database } from "bun:sqlite";
import type { Clock } from "../clock";
import type { Config } from "../config";
import type { Logger } from "../log";
import { Refusal, validationFailed } from "../errors";
import { uuidv7 } from "../ids";
import { topUp } from "./ledger";
import { ledgerKeys } from "./ledger-keys";
import { paymentsUnavailable, stripeClient, verifyWebhook } from "./stripe";
import * as store from "./store";
import { immediate } from "../db/transaction";

/** What top-ups and the Stripe webhook use. */
export interface TopUpDeps {
  db: Database;
  clock: Clock;
  log: Logger;
  config: Pick<Config, "publicUrl" | "stripeSecretKey" | "stripeWebhookSecret" | "stripeApiBase">;
}

export const TOP_UP_PENCE_MIN = 1_000;
export const TOP_UP_PENCE_MAX = 100_000;
/** Stripe webhook payloads are a few KiB; anything far larger is not one. */
export const WEBHOOK_BODY_BYTES_MAX = 1024 * 1024;
/** Processed event ids are kept well past Stripe's three days of redelivery. */
export const STRIPE_EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export interface TopUpCheckout {
  orderId: string;
  checkoutUrl: string;
  amountPence: number;
}

/**
 * Records an order and creates its Stripe Checkout Session (payment mode, GBP, one
 * "Credit top-up" line). Nothing is credited here: only the verified webhook credits.
 * `orderId` is the request's operationId, so a retried request finds its order and Stripe
 * (same idempotency key) returns the same session.
 */
export async function createTopUp(deps: TopUpDeps, input: { orgId: string; amountPence: number; orderId?: string }): Promise<TopUpCheckout> {
  const stripe = stripeClient(deps.config);
  if (!stripe) throw paymentsUnavailable("no payment provider is configured; an operator can credit the account instead");
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
  let session: Stripe.Checkout.Session;
  try {
    session = await stripe.checkout.sessions.create(
      {
        mode: "payment",
        currency: "gbp",
        line_items: [{ quantity: 1, price_data: { currency: "gbp", unit_amount: amountPence, product_data: { name: "Credit top-up" } } }],
        client_reference_id: orderId,
        metadata: { organisation_id: input.orgId, order_id: orderId },
        payment_intent_data: { metadata: { organisation_id: input.orgId, order_id: orderId } },
        success_url: returnUrl("success"),
        cancel_url: returnUrl("cancelled"),
      },
      { idempotencyKey: `regkb-top-up-${orderId}` },
    );
  } catch (error) {
    store.setOrderStatus(deps.db, orderId, "failed", deps.clock.nowMs());
    // The SDK's messages never carry the secret key, but log only the type and code anyway.
    const e = error as { type?: string; code?: string; statusCode?: number };
    deps.log.warn("stripe_checkout_failed", { orderId, type: e.type ?? null, code: e.code ?? null, status: e.statusCode ?? null });
    throw paymentsUnavailable("the payment provider did not create a checkout; try again shortly");
  }
  if (!session.url) {
    store.setOrderStatus(deps.db, orderId, "failed", deps.clock.nowMs());
    throw paymentsUnavailable("the payment provider returned a checkout without a URL");
  }
  store.setOrderCheckout(deps.db, orderId, session.id, session.url, deps.clock.nowMs());
  return { orderId, checkoutUrl: session.url, amountPence };
}

export const invalidSignature = () =>
  new Refusal("invalid_signature", "Stripe-Signature does not match the body and webhook secret, or is older than 300 seconds");

/**
 * POST /v1/webhooks/stripe: verify, then apply the event once. Returns what happened, for
 * the response body and the log. Bad signature → 400 and nothing recorded.
 */
export async function handleStripeWebhook(deps: TopUpDeps, rawBody: string, signature: string | null): Promise<string> {
  const secret = deps.config.stripeWebhookSecret;
  if (!secret) throw paymentsUnavailable("no Stripe webhook secret is configured");
  if (!signature) throw invalidSignature();
  let parsed: unknown;
  try {
    parsed = await verifyWebhook(rawBody, signature, secret, deps.clock.nowMs());
  } catch (error) {
    // The SDK parses the body only after the signature checks out: a parse error is a signed, malformed body.
    if (error instanceof SyntaxError) throw malformedEvent("not JSON");
    throw invalidSignature();
  }
  const event = checkedEvent(parsed);
  const outcome = applyStripeEvent(deps, event);
  deps.log.info("stripe_webhook", { eventId: event.id, type: event.type, outcome });
  return outcome;
}

/**
 * One transaction per event: a redelivered event id is answered from stripe_events; a new
 * one is applied and recorded together. Credit is one top_up per order (key topup:<orderId>)
 * for the stored order's amount, so any number of deliveries, in any order, of
 * checkout.session.completed (paid) and checkout.session.async_payment_succeeded credit once.
 */
export function applyStripeEvent(deps: TopUpDeps, event: Stripe.Event): string {
  const db = deps.db;
  return immediate(db, () => {
    const previous = store.findStripeEventOutcome(db, event.id);
    if (previous !== null) return `duplicate event (${previous})`;
    const nowMs = deps.clock.nowMs();
    const { outcome, orderId } = decide(deps, event, nowMs);
    store.recordStripeEvent(db, { id: event.id, type: event.type, orderId, outcome, receivedAtMs: nowMs });
    return outcome;
  });
}

const CHECKOUT_EVENTS = new Set([
  "checkout.session.completed",
  "checkout.session.async_payment_succeeded",
  "checkout.session.async_payment_failed",
  "checkout.session.expired",
]);

const EVENT_ID_LENGTH_MAX = 255;
const EVENT_TYPE_LENGTH_MAX = 255;

const malformedEvent = (why: string) => validationFailed(`body: not a usable Stripe event: ${why}`);

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const optionalString = (value: unknown) => value === undefined || value === null || typeof value === "string";

/**
 * A correct signature proves the body came from Stripe, not that it has the shape decide()
 * reads: check that shape first (400, nothing recorded) so no signed body can cause a 500.
 * Event types we do not handle need only an id and a type; they are acknowledged and ignored.
 */
export function checkedEvent(parsed: unknown): Stripe.Event {
  if (!isObject(parsed)) throw malformedEvent("not a JSON object");
  const { id, type } = parsed;
  if (typeof id !== "string" || id.length < 1 || id.length > EVENT_ID_LENGTH_MAX) {
    throw malformedEvent(`id must be a string of 1 to ${EVENT_ID_LENGTH_MAX} characters`);
  }
  if (typeof type !== "string" || type.length < 1 || type.length > EVENT_TYPE_LENGTH_MAX) {
    throw malformedEvent(`type must be a string of 1 to ${EVENT_TYPE_LENGTH_MAX} characters`);
  }
  if (!CHECKOUT_EVENTS.has(type)) return parsed as unknown as Stripe.Event;
  const session = isObject(parsed.data) ? parsed.data.object : undefined;
  if (!isObject(session)) throw malformedEvent("data.object must be a checkout session object");
  if (typeof session.id !== "string" || session.id === "") throw malformedEvent("data.object.id must be a non-empty string");
  if (session.metadata !== undefined && session.metadata !== null && !isObject(session.metadata)) {
    throw malformedEvent("data.object.metadata must be an object");
  }
  if (isObject(session.metadata) && !optionalString(session.metadata.order_id)) throw malformedEvent("data.object.metadata.order_id must be a string");
  if (!optionalString(session.client_reference_id)) throw malformedEvent("data.object.client_reference_id must be a string");
  return parsed as unknown as Stripe.Event;
}

function decide(deps: TopUpDeps, event: Stripe.Event, nowMs: number): { outcome: string; orderId: string | null } {
  if (!CHECKOUT_EVENTS.has(event.type)) return { outcome: "ignored: not a checkout event", orderId: null };
  const session = event.data.object as Stripe.Checkout.Session;
  const orderIdClaimed = session.metadata?.order_id ?? session.client_reference_id ?? null;
  const order = (orderIdClaimed ? store.findOrder(deps.db, orderIdClaimed) : null) ?? store.findOrderBySession(deps.db, session.id);
  if (!order) return { outcome: "ignored: unknown order", orderId: null };
  if (order.checkoutSessionId !== null && order.checkoutSessionId !== session.id) {
    deps.log.warn("stripe_webhook_session_mismatch", { orderId: order.id, eventId: event.id });
    return { outcome: "ignored: session does not match the order", orderId: order.id };
  }
  const paid =
    (event.type === "checkout.session.completed" && session.payment_status === "paid") ||
    event.type === "checkout.session.async_payment_succeeded";
  if (paid) {
    if (session.amount_total !== null && session.amount_total !== undefined && session.amount_total !== order.amountPence) {
      // Credit follows the stored order, never the event; a disagreement is worth a look.
      deps.log.warn("stripe_webhook_amount_mismatch", { orderId: order.id, eventId: event.id });
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
  if (event.type === "checkout.session.completed") return { outcome: "awaiting payment", orderId: order.id };
  if (event.type === "checkout.session.async_payment_failed") {
    store.setOrderStatus(deps.db, order.id, "failed", nowMs);
    return { outcome: "payment failed", orderId: order.id };
  }
  store.setOrderStatus(deps.db, order.id, "expired", nowMs);
  return { outcome: "checkout expired", orderId: order.id };
}
