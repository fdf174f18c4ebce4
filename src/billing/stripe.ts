import Stripe from "stripe";
import type { Config } from "../config";
import { Refusal, validationFailed } from "../errors";
import type { Logger } from "../log";
import { paymentsUnavailable, type CheckoutRequest, type CheckoutSession, type PaymentEvent, type PaymentProvider } from "./payments";

/** Bounds on calls to Stripe: a checkout request never hangs a client for long. */
const STRIPE_TIMEOUT_MS = 15_000;
const STRIPE_NETWORK_RETRIES = 2;
/** Stripe-Signature timestamps older than this are refused (replay protection). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export type StripeConfig = Pick<Config, "stripeSecretKey" | "stripeWebhookSecret" | "stripeApiBase">;

/**
 * The Stripe adapter. It reads the configuration on each call rather than once, so a
 * server without REGKB_STRIPE_SECRET_KEY (air-gapped installs credit through
 * `regkb credits top-up`) simply reports checkout as unavailable.
 */
export class StripePayments implements PaymentProvider {
  readonly name = "stripe";
  readonly signatureHeader = "stripe-signature";

  constructor(
    private readonly config: StripeConfig,
    private readonly log: Logger,
  ) {}

  checkoutAvailable(): boolean {
    return this.config.stripeSecretKey !== undefined;
  }

  /** A Checkout Session in payment mode, GBP, one "Credit top-up" line; the order id is Stripe's idempotency key. */
  async createCheckout(request: CheckoutRequest): Promise<CheckoutSession> {
    const stripe = stripeClient(this.config);
    if (!stripe) throw paymentsUnavailable("no payment provider is configured; an operator can credit the account instead");
    const { orderId, orgId, amountPence } = request;
    let session: Stripe.Checkout.Session;
    try {
      session = await stripe.checkout.sessions.create(
        {
          mode: "payment",
          currency: "gbp",
          line_items: [{ quantity: 1, price_data: { currency: "gbp", unit_amount: amountPence, product_data: { name: "Credit top-up" } } }],
          client_reference_id: orderId,
          metadata: { organisation_id: orgId, order_id: orderId },
          payment_intent_data: { metadata: { organisation_id: orgId, order_id: orderId } },
          success_url: request.successUrl,
          cancel_url: request.cancelUrl,
        },
        { idempotencyKey: `regkb-top-up-${orderId}` },
      );
    } catch (error) {
      // The SDK's messages never carry the secret key, but log only the type and code anyway.
      const e = error as { type?: string; code?: string; statusCode?: number };
      this.log.warn("stripe_checkout_failed", { orderId, type: e.type ?? null, code: e.code ?? null, status: e.statusCode ?? null });
      throw paymentsUnavailable("the payment provider did not create a checkout; try again shortly");
    }
    if (!session.url) throw paymentsUnavailable("the payment provider returned a checkout without a URL");
    return { sessionId: session.id, url: session.url };
  }

  async parseWebhook(rawBody: string, signature: string | null, nowMs: number): Promise<PaymentEvent> {
    const secret = this.config.stripeWebhookSecret;
    if (!secret) throw paymentsUnavailable("no Stripe webhook secret is configured");
    if (!signature) throw invalidSignature();
    let parsed: unknown;
    try {
      parsed = await verifyWebhook(rawBody, signature, secret, nowMs);
    } catch (error) {
      // The SDK parses the body only after the signature checks out: a parse error is a signed, malformed body.
      if (error instanceof SyntaxError) throw malformedEvent("not JSON");
      throw invalidSignature();
    }
    return paymentEvent(parsed);
  }
}

/** REGKB_STRIPE_API_BASE maps onto the SDK's host/port/protocol, for egress proxies and tests. */
function stripeClient(config: StripeConfig): Stripe | null {
  if (!config.stripeSecretKey) return null;
  return new Stripe(config.stripeSecretKey, {
    timeout: STRIPE_TIMEOUT_MS,
    maxNetworkRetries: STRIPE_NETWORK_RETRIES,
    ...apiBaseOptions(config.stripeApiBase),
  });
}

function apiBaseOptions(apiBase: string | undefined): { host?: string; port?: number; protocol?: "http" | "https" } {
  if (!apiBase) return {};
  const url = new URL(apiBase);
  const protocol = url.protocol === "http:" ? "http" : "https";
  return { host: url.hostname, port: url.port ? Number(url.port) : protocol === "http" ? 80 : 443, protocol };
}

/**
 * Verifies the Stripe-Signature header against the raw body (constructEventAsync: only the
 * async variant works in Bun, whose Stripe build uses SubtleCrypto). Age is measured with
 * the injected clock so tests can cross the tolerance.
 */
async function verifyWebhook(rawBody: string, signature: string, secret: string, nowMs: number): Promise<Stripe.Event> {
  return Stripe.webhooks.constructEventAsync(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, nowMs);
}

export const invalidSignature = () =>
  new Refusal("invalid_signature", "Stripe-Signature does not match the body and webhook secret, or is older than 300 seconds");

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
 * A correct signature proves the body came from Stripe, not that it has the shape top-ups
 * reads: check that shape first (400, nothing recorded) so no signed body can cause a 500.
 * Event types we do not handle need only an id and a type; they are acknowledged and ignored.
 */
export function paymentEvent(parsed: unknown): PaymentEvent {
  if (!isObject(parsed)) throw malformedEvent("not a JSON object");
  const { id, type } = parsed;
  if (typeof id !== "string" || id.length < 1 || id.length > EVENT_ID_LENGTH_MAX) {
    throw malformedEvent(`id must be a string of 1 to ${EVENT_ID_LENGTH_MAX} characters`);
  }
  if (typeof type !== "string" || type.length < 1 || type.length > EVENT_TYPE_LENGTH_MAX) {
    throw malformedEvent(`type must be a string of 1 to ${EVENT_TYPE_LENGTH_MAX} characters`);
  }
  if (!CHECKOUT_EVENTS.has(type)) return { kind: "other", eventId: id, type };
  const session = isObject(parsed.data) ? parsed.data.object : undefined;
  if (!isObject(session)) throw malformedEvent("data.object must be a checkout session object");
  if (typeof session.id !== "string" || session.id === "") throw malformedEvent("data.object.id must be a non-empty string");
  if (session.metadata !== undefined && session.metadata !== null && !isObject(session.metadata)) {
    throw malformedEvent("data.object.metadata must be an object");
  }
  if (isObject(session.metadata) && !optionalString(session.metadata.order_id)) throw malformedEvent("data.object.metadata.order_id must be a string");
  if (!optionalString(session.client_reference_id)) throw malformedEvent("data.object.client_reference_id must be a string");
  const metadataOrderId = isObject(session.metadata) ? (session.metadata.order_id as string | null | undefined) : undefined;
  return {
    kind: "checkout",
    eventId: id,
    type,
    status: checkoutStatus(type, session.payment_status),
    sessionId: session.id,
    orderId: metadataOrderId ?? (session.client_reference_id as string | null | undefined) ?? null,
    amountPence: typeof session.amount_total === "number" ? session.amount_total : null,
  };
}

/** checkout.session.completed is a payment only once payment_status is paid; otherwise the money is still on its way. */
function checkoutStatus(type: string, paymentStatus: unknown): "paid" | "awaiting_payment" | "failed" | "expired" {
  if (type === "checkout.session.async_payment_succeeded") return "paid";
  if (type === "checkout.session.completed") return paymentStatus === "paid" ? "paid" : "awaiting_payment";
  if (type === "checkout.session.async_payment_failed") return "failed";
  return "expired";
}
