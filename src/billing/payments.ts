import { Refusal } from "../errors";

/**
 * What card top-ups need from a payment processor. Stripe (billing/stripe.ts) is the one
 * implementation deps.ts builds; top-ups and the webhook route see only this interface.
 */
export interface PaymentProvider {
  /** Short lower-case name, for log event names (`stripe_webhook`). */
  readonly name: string;
  /** The request header the processor signs its webhooks in. */
  readonly signatureHeader: string;
  /** False when no credentials are configured: top-ups are refused with payments_unavailable. */
  checkoutAvailable(): boolean;
  /**
   * A hosted checkout for one order. The same orderId must give the same session on a
   * retry. Throws a payments_unavailable Refusal when the processor does not create one.
   */
  createCheckout(request: CheckoutRequest): Promise<CheckoutSession>;
  /**
   * Verifies a webhook's signature over the raw body (age measured at `nowMs`) and parses it.
   * Throws a Refusal: invalid_signature, validation_failed (signed but unusable body) or
   * payments_unavailable (no webhook secret configured).
   */
  parseWebhook(rawBody: string, signature: string | null, nowMs: number): Promise<PaymentEvent>;
}

export interface CheckoutRequest {
  orderId: string;
  orgId: string;
  /** Charged in GBP. */
  amountPence: number;
  /** Where the payer returns to after paying, and after giving up. */
  successUrl: string;
  cancelUrl: string;
}

export interface CheckoutSession {
  sessionId: string;
  url: string;
}

/** The processor's verdict on a checkout, as top-ups reads it. */
export type CheckoutStatus = "paid" | "awaiting_payment" | "failed" | "expired";

/** A verified webhook event. `type` is the processor's own name for it, kept for the record. */
export type PaymentEvent =
  | { kind: "other"; eventId: string; type: string }
  | {
      kind: "checkout";
      eventId: string;
      type: string;
      status: CheckoutStatus;
      sessionId: string;
      /** The order the checkout claims to pay for, if it says. */
      orderId: string | null;
      /** What the processor says was charged, if it says; credit always follows the stored order. */
      amountPence: number | null;
    };

export const paymentsUnavailable = (details: string) => new Refusal("payments_unavailable", details);
