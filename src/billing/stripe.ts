import Stripe from "stripe";
import type { Config } from "../config";
import { Refusal } from "../errors";

/** Bounds on calls to Stripe: a checkout request never hangs a client for long. */
const STRIPE_TIMEOUT_MS = 15_000;
const STRIPE_NETWORK_RETRIES = 2;
/** Stripe-Signature timestamps older than this are refused (replay protection). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export const paymentsUnavailable = (details: string) => new Refusal("payments_unavailable", details);

/**
 * A Stripe client for the configured secret key, or null when payments are not configured
 * (air-gapped installs credit through `regkb credits top-up`). REGKB_STRIPE_API_BASE maps
 * onto the SDK's host/port/protocol, for egress proxies and tests.
 */
export function stripeClient(config: Pick<Config, "stripeSecretKey" | "stripeApiBase">): Stripe | null {
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
export async function verifyWebhook(rawBody: string, signature: string, secret: string, nowMs: number): Promise<Stripe.Event> {
  return Stripe.webhooks.constructEventAsync(rawBody, signature, secret, WEBHOOK_TOLERANCE_SECONDS, undefined, nowMs);
}
