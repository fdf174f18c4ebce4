import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import Stripe from "stripe";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { startTestServer, type TestServer } from "../helpers/server";

const WEBHOOK_SECRET = "whsec_test_regkb_0123456789";
const SESSION_URL_BASE = "https://checkout.stripe.test/c/pay/";

/** A stand-in for api.stripe.com: records what the real SDK sends and answers like Stripe. */
function startFakeStripe() {
  const requests: { path: string; authorization: string | null; idempotencyKey: string | null; params: URLSearchParams }[] = [];
  let sessions = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const params = new URLSearchParams(await request.text());
      requests.push({
        path: url.pathname,
        authorization: request.headers.get("authorization"),
        idempotencyKey: request.headers.get("idempotency-key"),
        params,
      });
      if (request.method !== "POST" || url.pathname !== "/v1/checkout/sessions") {
        return Response.json({ error: { type: "invalid_request_error", message: "unknown path" } }, { status: 404 });
      }
      const id = `cs_test_${++sessions}`;
      return Response.json({
        id,
        object: "checkout.session",
        mode: params.get("mode"),
        currency: params.get("currency"),
        amount_total: Number(params.get("line_items[0][price_data][unit_amount]")),
        payment_status: "unpaid",
        status: "open",
        client_reference_id: params.get("client_reference_id"),
        metadata: { organisation_id: params.get("metadata[organisation_id]"), order_id: params.get("metadata[order_id]") },
        url: `${SESSION_URL_BASE}${id}`,
      });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true) };
}

function checkoutEvent(id: string, type: string, session: Record<string, unknown>) {
  return JSON.stringify({ id, object: "event", type, api_version: "2025-01-01", created: Math.floor(Date.now() / 1000), data: { object: session } });
}

async function signed(payload: string, options: { secret?: string; timestamp?: number } = {}) {
  return Stripe.webhooks.generateTestHeaderStringAsync({ payload, secret: options.secret ?? WEBHOOK_SECRET, timestamp: options.timestamp });
}

let fake: ReturnType<typeof startFakeStripe>;
let server: TestServer;

beforeAll(async () => {
  fake = startFakeStripe();
  server = await startTestServer({
    background: false,
    env: {
      REGKB_STRIPE_SECRET_KEY: "sk_test_regkb_fake",
      REGKB_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      REGKB_STRIPE_API_BASE: fake.url,
      REGKB_PUBLIC_URL: "https://regkb.example.com",
    },
  });
});

afterAll(async () => {
  await server?.stop();
  fake?.stop();
});

async function webhook(payload: string, signature: string | null) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (signature !== null) headers["stripe-signature"] = signature;
  const response = await fetch(`${server.url}/v1/webhooks/stripe`, { method: "POST", headers, body: payload });
  return { status: response.status, body: (await response.json()) as any };
}

function topUps(orgId: string): number {
  return server.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM ledger_entries WHERE org_id = ? AND type = 'top_up'").get(orgId)!.n;
}

describe("Stripe top-ups", () => {
  test("POST /v1/top-ups creates a Checkout Session through the real SDK", async () => {
    const org = server.createOrg();
    const response = await server.api("/v1/top-ups", { key: org.key, body: { amountPence: 2500 } });
    expect(response.status).toBe(200);
    expect(response.body.amountPence).toBe(2500);
    expect(response.body.checkoutUrl).toStartWith(SESSION_URL_BASE);
    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe("/v1/checkout/sessions");
    expect(sent.authorization).toBe("Bearer sk_test_regkb_fake");
    expect(sent.idempotencyKey).toBe(`regkb-top-up-${response.body.orderId}`);
    expect(Object.fromEntries(sent.params)).toMatchObject({
      mode: "payment",
      currency: "gbp",
      "line_items[0][quantity]": "1",
      "line_items[0][price_data][currency]": "gbp",
      "line_items[0][price_data][unit_amount]": "2500",
      "line_items[0][price_data][product_data][name]": "Credit top-up",
      "metadata[organisation_id]": org.orgId,
      "metadata[order_id]": response.body.orderId,
      client_reference_id: response.body.orderId,
    });
    expect(sent.params.get("success_url")).toStartWith("https://regkb.example.com/");
    expect(sent.params.get("cancel_url")).toStartWith("https://regkb.example.com/");
    // Nothing is credited until the payment completes.
    expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(0);
  });

  test("amounts outside 1000..100000 are 400", async () => {
    const org = server.createOrg();
    for (const amountPence of [999, 100_001, 10.5]) {
      const response = await server.api("/v1/top-ups", { key: org.key, body: { amountPence } });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("validation_failed");
    }
  });

  test("the completed webhook delivered 25 times concurrently credits exactly once, for the stored amount", async () => {
    const org = server.createOrg();
    const { body: order } = await server.api("/v1/top-ups", { key: org.key, body: { amountPence: 5000 } });
    const sessionId = order.checkoutUrl.slice(SESSION_URL_BASE.length);
    const session = {
      id: sessionId,
      object: "checkout.session",
      payment_status: "paid",
      client_reference_id: order.orderId,
      metadata: { organisation_id: org.orgId, order_id: order.orderId },
      // Never trusted: credit comes from the stored order.
      amount_total: 999_999,
    };
    const completed = checkoutEvent("evt_completed_1", "checkout.session.completed", session);
    const signature = await signed(completed);
    const deliveries = await Promise.all(Array.from({ length: 25 }, () => webhook(completed, signature)));
    expect(deliveries.map((d) => d.status)).toEqual(Array(25).fill(200));
    expect(deliveries.filter((d) => d.body.outcome === "credited").length).toBe(1);
    // Another event for the same order (async success) arriving later credits nothing more.
    const asyncSucceeded = checkoutEvent("evt_async_1", "checkout.session.async_payment_succeeded", session);
    expect((await webhook(asyncSucceeded, await signed(asyncSucceeded))).body.outcome).toBe("already credited");
    expect(topUps(org.orgId)).toBe(1);
    expect(getBalance(server.deps.db, org.orgId)).toEqual({ balancePence: 5000, heldPence: 0, availablePence: 5000, currency: "GBP" });
    const processed = server.deps.db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM stripe_events WHERE id IN ('evt_completed_1', 'evt_async_1')").get()!.n;
    expect(processed).toBe(2);
    const { body: ledger } = await server.api("/v1/credits/ledger", { key: org.key });
    expect(ledger.entries).toHaveLength(1);
    expect(ledger.entries[0]).toMatchObject({ type: "top_up", amountPence: 5000, currency: "GBP" });
  });

  test("an unpaid completion waits for async success; unknown orders are acknowledged and ignored", async () => {
    const org = server.createOrg();
    const { body: order } = await server.api("/v1/top-ups", { key: org.key, body: { amountPence: 1000 } });
    const sessionId = order.checkoutUrl.slice(SESSION_URL_BASE.length);
    const session = { id: sessionId, object: "checkout.session", payment_status: "unpaid", metadata: { order_id: order.orderId } };
    const pending = checkoutEvent("evt_unpaid_1", "checkout.session.completed", session);
    expect((await webhook(pending, await signed(pending))).body.outcome).toBe("awaiting payment");
    expect(topUps(org.orgId)).toBe(0);
    const succeeded = checkoutEvent("evt_async_2", "checkout.session.async_payment_succeeded", { ...session, payment_status: "paid" });
    expect((await webhook(succeeded, await signed(succeeded))).body.outcome).toBe("credited");
    expect(topUps(org.orgId)).toBe(1);

    const unknown = checkoutEvent("evt_unknown_1", "checkout.session.completed", {
      id: "cs_test_unknown",
      payment_status: "paid",
      metadata: { order_id: "0190f5e2-0000-7000-8000-000000000000" },
    });
    const ignored = await webhook(unknown, await signed(unknown));
    expect(ignored.status).toBe(200);
    expect(ignored.body.outcome).toBe("ignored: unknown order");
  });

  test("tampered body, wrong secret, stale timestamp or no signature: 400 and no credit", async () => {
    const org = server.createOrg();
    const { body: order } = await server.api("/v1/top-ups", { key: org.key, body: { amountPence: 3000 } });
    const session = {
      id: order.checkoutUrl.slice(SESSION_URL_BASE.length),
      payment_status: "paid",
      metadata: { order_id: order.orderId },
    };
    const payload = checkoutEvent("evt_bad_1", "checkout.session.completed", session);
    const attempts = [
      webhook(payload.replace('"paid"', '"paid" '), await signed(payload)),
      webhook(payload, await signed(payload, { secret: "whsec_wrong" })),
      webhook(payload, await signed(payload, { timestamp: Math.floor(Date.now() / 1000) - 301 })),
      webhook(payload, null),
    ];
    for (const attempt of await Promise.all(attempts)) {
      expect(attempt.status).toBe(400);
      expect(attempt.body.error).toBe("invalid_signature");
    }
    expect(topUps(org.orgId)).toBe(0);
    expect(server.deps.db.query("SELECT 1 FROM stripe_events WHERE id = 'evt_bad_1'").get()).toBeNull();
    // The genuine delivery still works afterwards.
    expect((await webhook(payload, await signed(payload))).body.outcome).toBe("credited");
    expect(verifyLedger(server.deps.db).ok).toBe(true);
  });

  test("without a Stripe key POST /v1/top-ups is 503 payments_unavailable", async () => {
    const bare = await startTestServer({ background: false });
    try {
      const org = bare.createOrg();
      const response = await bare.api("/v1/top-ups", { key: org.key, body: { amountPence: 1000 } });
      expect(response.status).toBe(503);
      expect(response.body.error).toBe("payments_unavailable");
    } finally {
      await bare.stop();
    }
  });
});
