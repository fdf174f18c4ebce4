// Top-ups through a second PaymentProvider, held in memory: top-ups and the webhook handler
// must depend on the interface alone. The Stripe adapter keeps its own tests (stripe*.test.ts).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { createHmac, timingSafeEqual } from "node:crypto";
import { rmSync } from "node:fs";
import { createOrganisation } from "../../src/auth/service";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import {
  paymentsUnavailable,
  type CheckoutRequest,
  type CheckoutSession,
  type CheckoutStatus,
  type PaymentEvent,
  type PaymentProvider,
} from "../../src/billing/payments";
import { findOrder } from "../../src/billing/store";
import { createTopUp, handlePaymentWebhook, type TopUpDeps } from "../../src/billing/top-ups";
import { openDatabase } from "../../src/db/open";
import { Refusal } from "../../src/errors";
import { createLogger } from "../../src/log";
import { tempDir } from "../helpers/server";

const SECRET = "in-memory-webhook-secret";

/** A processor in this process: sessions in a map, webhooks signed with HMAC-SHA256 over the body. */
class InMemoryPayments implements PaymentProvider {
  readonly name = "memory";
  readonly signatureHeader = "x-memory-signature";
  readonly sessions = new Map<string, CheckoutRequest & CheckoutSession>();
  available = true;
  failNextCheckout = false;

  checkoutAvailable(): boolean {
    return this.available;
  }

  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    if (this.failNextCheckout) {
      this.failNextCheckout = false;
      throw paymentsUnavailable("the processor is down");
    }
    const existing = [...this.sessions.values()].find((s) => s.orderId === request.orderId);
    if (existing) return { sessionId: existing.sessionId, url: existing.url };
    const sessionId = `ms_${this.sessions.size + 1}`;
    const session = { ...request, sessionId, url: `https://pay.memory.test/${sessionId}` };
    this.sessions.set(sessionId, session);
    return { sessionId, url: session.url };
  }

  async parseWebhook(rawBody: string, signature: string | null, _nowMs: number): Promise<PaymentEvent> {
    const expected = Buffer.from(sign(rawBody));
    const given = Buffer.from(signature ?? "");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new Refusal("invalid_signature", "the signature does not match the body");
    }
    return JSON.parse(rawBody) as PaymentEvent;
  }

  /** What the processor would send when `sessionId` reaches `status`. */
  event(eventId: string, sessionId: string, status: CheckoutStatus): { body: string; signature: string } {
    const session = this.sessions.get(sessionId)!;
    const event: PaymentEvent = {
      kind: "checkout",
      eventId,
      type: `checkout.${status}`,
      status,
      sessionId,
      orderId: session.orderId,
      amountPence: session.amountPence,
    };
    const body = JSON.stringify(event);
    return { body, signature: sign(body) };
  }
}

const sign = (body: string) => createHmac("sha256", SECRET).update(body).digest("hex");

let dataDir: string;
let db: Database;
let nowMs = Date.UTC(2026, 0, 15);
let payments: InMemoryPayments;
let deps: TopUpDeps;

beforeAll(async () => {
  dataDir = tempDir("regkb-payment-provider-");
  db = await openDatabase(dataDir);
  payments = new InMemoryPayments();
  deps = {
    db,
    clock: { nowMs: () => nowMs },
    log: createLogger("silent"),
    config: { publicUrl: "https://regkb.example.com" },
    payments,
  };
});

afterAll(() => {
  db?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const newOrg = (name: string) => createOrganisation({ db, clock: deps.clock }, { name, monthlyAllowancePence: 0 }).id;
const balanceOf = (orgId: string) => getBalance(db, orgId).balancePence;

test("a completed checkout credits once: a retried request, a replayed event and a second paid event add nothing more", async () => {
  const orgId = newOrg("Memory Payer");
  const before = balanceOf(orgId);
  const orderId = "01960000-0000-7000-8000-000000000001";

  const checkout = await createTopUp(deps, { orgId, amountPence: 2_500, orderId });
  const retried = await createTopUp(deps, { orgId, amountPence: 2_500, orderId });
  expect(retried).toEqual(checkout);
  expect(payments.sessions.size).toBe(1);
  const [session] = [...payments.sessions.values()];
  expect(checkout).toEqual({ orderId, checkoutUrl: session!.url, amountPence: 2_500 });
  expect(session!.successUrl).toBe(`https://regkb.example.com/top-up?order=${orderId}&outcome=success`);
  expect(balanceOf(orgId)).toBe(before);

  const waiting = payments.event("evt_m_1", session!.sessionId, "awaiting_payment");
  expect(await handlePaymentWebhook(deps, waiting.body, waiting.signature)).toBe("awaiting payment");
  expect(balanceOf(orgId)).toBe(before);

  nowMs += 1_000;
  const paid = payments.event("evt_m_2", session!.sessionId, "paid");
  expect(await handlePaymentWebhook(deps, paid.body, paid.signature)).toBe("credited");
  expect(balanceOf(orgId)).toBe(before + 2_500);
  expect(findOrder(db, orderId)?.status).toBe("paid");

  expect(await handlePaymentWebhook(deps, paid.body, paid.signature)).toBe("duplicate event (credited)");
  const paidAgain = payments.event("evt_m_3", session!.sessionId, "paid");
  expect(await handlePaymentWebhook(deps, paidAgain.body, paidAgain.signature)).toBe("already credited");
  expect(balanceOf(orgId)).toBe(before + 2_500);
  expect(verifyLedger(db).ok).toBe(true);
});

test("a forged webhook is refused by the provider and changes nothing", async () => {
  const orgId = newOrg("Memory Forger");
  const checkout = await createTopUp(deps, { orgId, amountPence: 1_000 });
  const session = [...payments.sessions.values()].find((s) => s.orderId === checkout.orderId)!;
  const paid = payments.event("evt_m_forged", session.sessionId, "paid");
  const refusal = await handlePaymentWebhook(deps, paid.body, sign("something else")).catch((e) => e);
  expect(refusal).toBeInstanceOf(Refusal);
  expect((refusal as Refusal).code).toBe("invalid_signature");
  expect(balanceOf(orgId)).toBe(0);
  // Not recorded either: the genuine delivery of the same event id still credits.
  expect(await handlePaymentWebhook(deps, paid.body, paid.signature)).toBe("credited");
  expect(balanceOf(orgId)).toBe(1_000);
});

test("no provider credentials: payments_unavailable and no order; a failed checkout leaves its order failed", async () => {
  const orgId = newOrg("Memory Unavailable");
  payments.available = false;
  const orderId = "01960000-0000-7000-8000-000000000002";
  const unavailable = await createTopUp(deps, { orgId, amountPence: 1_000, orderId }).catch((e) => e);
  payments.available = true;
  expect((unavailable as Refusal).code).toBe("payments_unavailable");
  expect(findOrder(db, orderId)).toBeNull();

  payments.failNextCheckout = true;
  const failed = await createTopUp(deps, { orgId, amountPence: 1_000, orderId }).catch((e) => e);
  expect((failed as Refusal).code).toBe("payments_unavailable");
  expect(findOrder(db, orderId)?.status).toBe("failed");
});
