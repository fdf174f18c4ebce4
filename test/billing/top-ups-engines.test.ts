// Card top-ups and their webhook, operator credits and adjustments, monthly allowances and the
// billing tick (src/billing/top-ups.ts, operator.ts, grants.ts, ticker.ts) on SQLite and on
// PostgreSQL through the synchronous handle (test/helpers/engines.ts): the same calls, the same
// answers. Checkouts go through the real Stripe adapter to the fake Stripe server.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { grantDueAllowances, grantMonthlyAllowance, monthOf } from "../../src/billing/grants";
import { recordAdjustment, recordOperatorTopUp } from "../../src/billing/operator";
import { findEntryByKey, findOrder, findStripeEventOutcome, recordStripeEvent } from "../../src/billing/store";
import { paymentEvent, StripePayments } from "../../src/billing/stripe";
import { billingTick } from "../../src/billing/ticker";
import { applyPaymentEvent, createTopUp, handlePaymentWebhook, STRIPE_EVENT_RETENTION_MS, type TopUpDeps } from "../../src/billing/top-ups";
import { createLogger } from "../../src/log";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { startFakeStripe, stripeSignature, type FakeStripe } from "../helpers/fake-stripe";
import { refusalOf } from "../helpers/refusal";

const WEBHOOK_SECRET = "whsec_engines_test";
const DAY_MS = 86_400_000;

let fake: FakeStripe;
beforeAll(() => {
  fake = startFakeStripe();
});
afterAll(() => fake.stop());

forEachEngine((current) => {
  let engine: TestEngine;
  let nowMs = Date.UTC(2026, 2, 10, 12);
  let deps: TopUpDeps;
  beforeAll(() => {
    engine = current();
    const config = { stripeSecretKey: "sk_test_engines", stripeWebhookSecret: WEBHOOK_SECRET, stripeApiBase: fake.url };
    const log = createLogger("silent");
    deps = { db: engine.db, clock: { nowMs: () => nowMs }, log, config: { publicUrl: "https://regkb.example.com" }, payments: new StripePayments(config, log) };
  });

  /** A Stripe event for the fake's session, as Stripe would send it once the checkout reached `type`. */
  function stripeEvent(id: string, type: string, sessionId: string, paymentStatus: "paid" | "unpaid" = "paid"): string {
    const session = { ...fake.sessions.get(sessionId)!, payment_status: paymentStatus };
    return JSON.stringify({ id, object: "event", type, created: Math.floor(nowMs / 1000), data: { object: session } });
  }

  const deliver = (body: string) => handlePaymentWebhook(deps, body, stripeSignature(body, WEBHOOK_SECRET, Math.floor(nowMs / 1000)));
  const balanceOf = (orgId: string) => getBalance(engine.db, orgId).balancePence;

  test("a checkout is created once per order; a paid event credits the stored amount once, whatever is delivered after it", async () => {
    const orgId = engine.createOrganisation(`Card payer ${engine.name}`);
    const orderId = crypto.randomUUID();
    const checkout = await createTopUp(deps, { orgId, amountPence: 2_500, orderId });
    expect(checkout).toEqual({ orderId, checkoutUrl: checkout.checkoutUrl, amountPence: 2_500 });
    expect(await createTopUp(deps, { orgId, amountPence: 2_500, orderId })).toEqual(checkout);
    const order = findOrder(engine.db, orderId)!;
    expect(order).toEqual({
      id: orderId,
      orgId,
      amountPence: 2_500,
      currency: "GBP",
      status: "pending",
      checkoutSessionId: order.checkoutSessionId,
      checkoutUrl: checkout.checkoutUrl,
      createdAtMs: nowMs,
      updatedAtMs: nowMs,
    });
    const sessionId = order.checkoutSessionId!;

    expect(await deliver(stripeEvent(`evt_open_${engine.name}`, "checkout.session.completed", sessionId, "unpaid"))).toBe("awaiting payment");
    expect(balanceOf(orgId)).toBe(0);
    const paid = stripeEvent(`evt_paid_${engine.name}`, "checkout.session.completed", sessionId);
    expect(await deliver(paid)).toBe("credited");
    expect(await deliver(paid)).toBe("duplicate event (credited)");
    expect(await deliver(stripeEvent(`evt_async_${engine.name}`, "checkout.session.async_payment_succeeded", sessionId))).toBe("already credited");
    expect(await deliver(stripeEvent(`evt_expired_${engine.name}`, "checkout.session.expired", sessionId))).toBe("checkout expired");
    expect(balanceOf(orgId)).toBe(2_500);
    expect(findOrder(engine.db, orderId)?.status).toBe("paid");
    expect(findEntryByKey(engine.db, ledgerKeys.cardTopUp(orderId).key)).toMatchObject({ orgId, type: "top_up", amountPence: 2_500, ref: orderId });
    expect(findStripeEventOutcome(engine.db, `evt_paid_${engine.name}`)).toBe("credited");
    const forged = paid.replace("evt_paid", "evt_forged");
    const paidSignature = stripeSignature(paid, WEBHOOK_SECRET, Math.floor(nowMs / 1000));
    expect(await refusalOf(() => handlePaymentWebhook(deps, forged, paidSignature))).toEqual({ status: 400, code: "invalid_signature" });
    expect(findStripeEventOutcome(engine.db, `evt_forged_${engine.name}`)).toBeNull();
    expect(await refusalOf(() => createTopUp(deps, { orgId, amountPence: 999 }))).toEqual({ status: 400, code: "validation_failed" });
  });

  test("events for unknown orders, other sessions, failures and other types are recorded and move no money", async () => {
    const orgId = engine.createOrganisation(`Card failures ${engine.name}`);
    const orderId = crypto.randomUUID();
    await createTopUp(deps, { orgId, amountPence: 1_000, orderId });
    const sessionId = findOrder(engine.db, orderId)!.checkoutSessionId!;
    const event = (id: string, fields: Record<string, unknown>) =>
      paymentEvent({ id, type: "checkout.session.completed", data: { object: { id: sessionId, payment_status: "paid", metadata: { order_id: orderId }, ...fields } } });
    expect(applyPaymentEvent(deps, event(`evt_unknown_${engine.name}`, { metadata: { order_id: "no-such-order" }, id: "cs_none" }))).toBe("ignored: unknown order");
    expect(applyPaymentEvent(deps, event(`evt_other_session_${engine.name}`, { id: "cs_someone_else" }))).toBe("ignored: session does not match the order");
    expect(applyPaymentEvent(deps, paymentEvent({ id: `evt_charge_${engine.name}`, type: "charge.refunded" }))).toBe("ignored: not a checkout event");
    const failed = paymentEvent({ id: `evt_failed_${engine.name}`, type: "checkout.session.async_payment_failed", data: { object: { id: sessionId, metadata: { order_id: orderId } } } });
    expect(applyPaymentEvent(deps, failed)).toBe("payment failed");
    expect(applyPaymentEvent(deps, failed)).toBe("duplicate event (payment failed)");
    expect(findOrder(engine.db, orderId)?.status).toBe("failed");
    expect(balanceOf(orgId)).toBe(0);
  });

  test("operator top-ups are idempotent per reference; adjustments are signed and refused below zero", async () => {
    const orgId = engine.createOrganisation(`Operator ${engine.name}`);
    const first = recordOperatorTopUp(deps, { orgId, amountPence: 10_000, reference: " INV-1 " });
    expect(first.created).toBe(true);
    expect(first.entry).toMatchObject({ orgId, type: "top_up", amountPence: 10_000, ref: "INV-1", description: "Top-up recorded by an operator (reference INV-1)" });
    expect(recordOperatorTopUp(deps, { orgId, amountPence: 10_000, reference: "INV-1" })).toEqual({ entry: first.entry, created: false });
    expect(await refusalOf(() => recordOperatorTopUp(deps, { orgId, amountPence: 9_000, reference: "INV-1" }))).toEqual({ status: 400, code: "validation_failed" });
    expect(recordOperatorTopUp(deps, { orgId, amountPence: 500 }).created).toBe(true);
    expect(recordAdjustment(deps, { orgId, amountPence: -2_000, reason: "goodwill reversed" })).toMatchObject({ type: "adjustment", amountPence: -2_000 });
    expect(await refusalOf(() => recordAdjustment(deps, { orgId, amountPence: -1_000_000, reason: "too much" }))).toEqual({ status: 402, code: "insufficient_credit" });
    expect(await refusalOf(() => recordOperatorTopUp(deps, { orgId: "no-such-org", amountPence: 1 }))).toEqual({ status: 404, code: "not_found" });
    expect(balanceOf(orgId)).toBe(8_500);
  });

  test("monthly allowances are written once a month, by the tick or on request, and the tick forgets old event ids", () => {
    const withAllowance = engine.createOrganisation(`Allowance ${engine.name}`, 700);
    const without = engine.createOrganisation(`No allowance ${engine.name}`, 0);
    expect(grantMonthlyAllowance(deps, withAllowance)).toBe(true);
    expect(grantMonthlyAllowance(deps, withAllowance)).toBe(false);
    expect(grantMonthlyAllowance(deps, without)).toBe(false);
    expect(grantMonthlyAllowance(deps, "no-such-org")).toBe(false);
    expect(balanceOf(withAllowance)).toBe(700);

    recordStripeEvent(engine.db, { id: `evt_old_${engine.name}`, type: "t", orderId: null, outcome: "o", receivedAtMs: nowMs - STRIPE_EVENT_RETENTION_MS - 1 });
    recordStripeEvent(engine.db, { id: `evt_new_${engine.name}`, type: "t", orderId: null, outcome: "o", receivedAtMs: nowMs - DAY_MS });
    nowMs = Date.UTC(2026, 3, 1);
    const month = monthOf(nowMs);
    const ticked = billingTick(deps);
    // Every organisation of this engine's database with an allowance is due in a new month.
    expect(ticked.grants).toBeGreaterThanOrEqual(1);
    expect(ticked.stripeEventsPurged).toBeGreaterThanOrEqual(1);
    expect(findStripeEventOutcome(engine.db, `evt_old_${engine.name}`)).toBeNull();
    expect(findStripeEventOutcome(engine.db, `evt_new_${engine.name}`)).toBe("o");
    expect(findEntryByKey(engine.db, ledgerKeys.monthlyGrant(withAllowance, month).key)?.amountPence).toBe(700);
    expect(grantDueAllowances(deps)).toBe(0);
    expect(balanceOf(withAllowance)).toBe(1_400);
    expect(verifyLedger(engine.db).ok).toBe(true);
  });
});
