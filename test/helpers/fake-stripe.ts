import { createHmac } from "node:crypto";

/**
 * A local stand-in for the Stripe API and its hosted checkout, for tests: the real stripe
 * SDK talks to it through REGKB_STRIPE_API_BASE. It creates Checkout Sessions, serves a
 * plain checkout page (Pay / Cancel) that a browser can use, and delivers webhooks signed
 * exactly as Stripe signs them (Stripe-Signature: t=<unix seconds>,v1=<HMAC-SHA256 hex>).
 */
export interface FakeCheckoutSession {
  id: string;
  object: "checkout.session";
  mode: string;
  currency: string;
  amount_total: number;
  client_reference_id: string | null;
  metadata: Record<string, string>;
  payment_status: "unpaid" | "paid";
  status: "open" | "complete" | "expired";
  success_url: string;
  cancel_url: string;
  url: string;
}

export interface FakeStripe {
  /** The API base to give regkb as REGKB_STRIPE_API_BASE. */
  url: string;
  sessions: Map<string, FakeCheckoutSession>;
  /** Requests the SDK made, for assertions ("POST /v1/checkout/sessions"). */
  requests: string[];
  /** Where the Pay button delivers checkout.session.completed. */
  setWebhookTarget(url: string, secret: string): void;
  /** Signs and POSTs an event for a session to the webhook target; returns regkb's response. */
  deliver(type: string, sessionId: string): Promise<Response>;
  stop(): void;
}

export function stripeSignature(payload: string, secret: string, timestampSeconds = Math.floor(Date.now() / 1000)): string {
  const v1 = createHmac("sha256", secret).update(`${timestampSeconds}.${payload}`).digest("hex");
  return `t=${timestampSeconds},v1=${v1}`;
}

function randomId(prefix: string): string {
  return `${prefix}_${Buffer.from(crypto.getRandomValues(new Uint8Array(12))).toString("hex")}`;
}

function checkoutPage(session: FakeCheckoutSession): string {
  const pounds = (session.amount_total / 100).toFixed(2);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Fake Stripe Checkout</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><main><h1>Fake Stripe Checkout</h1><p>Pay £${pounds} to regkb (test mode).</p>
<form method="post" action="/checkout/${session.id}/pay"><button type="submit">Pay £${pounds}</button></form>
<p><a href="${session.cancel_url}">Cancel and return</a></p></main></body></html>`;
}

export function startFakeStripe(): FakeStripe {
  const sessions = new Map<string, FakeCheckoutSession>();
  const byIdempotencyKey = new Map<string, string>();
  const requests: string[] = [];
  let webhook: { url: string; secret: string } | undefined;

  async function deliver(type: string, sessionId: string): Promise<Response> {
    if (!webhook) throw new Error("fake stripe: no webhook target set");
    const session = sessions.get(sessionId);
    if (!session) throw new Error(`fake stripe: no session ${sessionId}`);
    const payload = JSON.stringify({
      id: randomId("evt"),
      object: "event",
      api_version: "2025-01-27.acacia",
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      type,
      data: { object: session },
    });
    return fetch(webhook.url, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": stripeSignature(payload, webhook.secret) },
      body: payload,
    });
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      requests.push(`${request.method} ${url.pathname}`);
      if (request.method === "POST" && url.pathname === "/v1/checkout/sessions") {
        const idempotencyKey = request.headers.get("idempotency-key");
        const known = idempotencyKey ? byIdempotencyKey.get(idempotencyKey) : undefined;
        if (known) return Response.json(sessions.get(known));
        const form = new URLSearchParams(await request.text());
        const metadata: Record<string, string> = {};
        for (const [key, value] of form) {
          const m = /^metadata\[(.+)\]$/.exec(key);
          if (m) metadata[m[1]!] = value;
        }
        const id = randomId("cs_test");
        const session: FakeCheckoutSession = {
          id,
          object: "checkout.session",
          mode: form.get("mode") ?? "payment",
          currency: form.get("currency") ?? "gbp",
          amount_total: Number(form.get("line_items[0][price_data][unit_amount]") ?? "0"),
          client_reference_id: form.get("client_reference_id"),
          metadata,
          payment_status: "unpaid",
          status: "open",
          success_url: form.get("success_url") ?? "",
          cancel_url: form.get("cancel_url") ?? "",
          url: `${url.origin}/checkout/${id}`,
        };
        sessions.set(id, session);
        if (idempotencyKey) byIdempotencyKey.set(idempotencyKey, id);
        return Response.json(session);
      }
      const page = /^\/checkout\/([\w]+)(\/pay)?$/.exec(url.pathname);
      const session = page ? sessions.get(page[1]!) : undefined;
      if (session && request.method === "GET" && !page![2]) {
        return new Response(checkoutPage(session), { headers: { "content-type": "text/html; charset=utf-8" } });
      }
      if (session && request.method === "POST" && page![2]) {
        session.payment_status = "paid";
        session.status = "complete";
        const delivered = await deliver("checkout.session.completed", session.id);
        if (!delivered.ok) return new Response(`webhook refused: ${delivered.status} ${await delivered.text()}`, { status: 502 });
        return Response.redirect(session.success_url, 303);
      }
      return Response.json({ error: { type: "invalid_request_error", message: `fake stripe: no route ${request.method} ${url.pathname}` } }, { status: 404 });
    },
  });

  return {
    url: `http://127.0.0.1:${server.port}`,
    sessions,
    requests,
    setWebhookTarget(target, secret) {
      webhook = { url: target, secret };
    },
    deliver,
    stop: () => server.stop(true),
  };
}
