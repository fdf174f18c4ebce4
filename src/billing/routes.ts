import { Elysia, t } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { ApiError, commonErrors, ErrorBody } from "../http/errors";
import { IDEMPOTENCY_KEY_PARAMETER, idempotency } from "../http/idempotency";
import { getBalance } from "./ledger";
import { CreditBalanceSchema, LedgerEntrySchema, ledgerEntryBody } from "./schemas";
import { listEntries } from "./store";
import { createTopUp, handleStripeWebhook, TOP_UP_PENCE_MAX, TOP_UP_PENCE_MIN, WEBHOOK_BODY_BYTES_MAX } from "./top-ups";

export const LEDGER_PAGE_DEFAULT = 50;
export const LEDGER_PAGE_MAX = 200;
/** Deep offsets cost an index walk of that many rows; this keeps one page under a few ms. */
export const LEDGER_OFFSET_MAX = 1_000_000;

export function creditRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey(deps))
    .use(idempotency(deps))
    .get("/credits", ({ auth }) => getBalance(deps.db, auth.orgId), {
      response: { 200: CreditBalanceSchema, ...commonErrors },
      detail: {
        summary: "Credit balance",
        description: "The organisation's balance, pence held for runs in progress, and available = balance − held. Free.",
        tags: ["Credits"],
      },
    })
    .get(
      "/credits/ledger",
      ({ auth, query }) => ({
        entries: listEntries(deps.db, auth.orgId, query.limit, query.offset).map(ledgerEntryBody),
      }),
      {
        query: t.Object({
          limit: t.Integer({ minimum: 1, maximum: LEDGER_PAGE_MAX, default: LEDGER_PAGE_DEFAULT }),
          offset: t.Integer({ minimum: 0, maximum: LEDGER_OFFSET_MAX, default: 0 }),
        }),
        response: { 200: t.Object({ entries: t.Array(LedgerEntrySchema) }), ...commonErrors },
        detail: {
          summary: "Ledger entries",
          description:
            `Immutable entries, newest first (ties broken by id). limit 1–${LEDGER_PAGE_MAX} (default ${LEDGER_PAGE_DEFAULT}), ` +
            `offset 0–${LEDGER_OFFSET_MAX}; out of range is 400 validation_failed. Free.`,
          tags: ["Credits"],
        },
      },
    )
    .post("/top-ups", ({ auth, body, operationId }) => createTopUp(deps, { orgId: auth.orgId, amountPence: body.amountPence, orderId: operationId }), {
      body: t.Object({ amountPence: t.Integer({ minimum: TOP_UP_PENCE_MIN, maximum: TOP_UP_PENCE_MAX, examples: [2000] }) }),
      response: {
        200: t.Object({
          orderId: t.String({ description: "UUIDv7 of the top-up order." }),
          checkoutUrl: t.String({ description: "Hosted checkout page to send the payer to." }),
          amountPence: t.Integer(),
        }),
        409: ErrorBody,
        ...commonErrors,
      },
      detail: {
          parameters: [IDEMPOTENCY_KEY_PARAMETER],
        summary: "Start a card top-up",
        description:
          "Creates a hosted Stripe Checkout (GBP) for amountPence (1000–100000) and returns its URL. Credit lands as one " +
          "`top_up` ledger entry when the payment completes (verified webhook), never before. 503 payments_unavailable when " +
          "no payment provider is configured (operators then credit with `regkb credits top-up`).",
        tags: ["Credits"],
      },
    });
}

/** Stripe calls this; it carries no bearer key, only the Stripe-Signature over the raw body. */
export function stripeWebhookRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" }).post(
    "/webhooks/stripe",
    async ({ request }) => {
      const declaredBytes = Number(request.headers.get("content-length") ?? "0");
      if (declaredBytes > WEBHOOK_BODY_BYTES_MAX) throw new ApiError(413, "payload_too_large", `webhook bodies are at most ${WEBHOOK_BODY_BYTES_MAX} bytes`);
      const raw = await request.text();
      if (Buffer.byteLength(raw) > WEBHOOK_BODY_BYTES_MAX) throw new ApiError(413, "payload_too_large", `webhook bodies are at most ${WEBHOOK_BODY_BYTES_MAX} bytes`);
      const outcome = await handleStripeWebhook(deps, raw, request.headers.get("stripe-signature"));
      return { received: true, outcome };
    },
    {
      parse: "none",
      response: { 200: t.Object({ received: t.Boolean(), outcome: t.String() }), 400: ErrorBody, 413: ErrorBody, 500: ErrorBody, 503: ErrorBody },
      detail: {
        summary: "Stripe webhook",
        description:
          "For Stripe only: no bearer key; the Stripe-Signature header is verified against the raw body with " +
          "REGKB_STRIPE_WEBHOOK_SECRET (300 s tolerance). checkout.session.completed (payment_status paid) and " +
          "checkout.session.async_payment_succeeded credit the stored order's amount exactly once. Unknown orders and other " +
          "event types are acknowledged with 200 and ignored; a bad signature is 400 invalid_signature; a signed body that is not " +
          "JSON, or a checkout event without the fields it needs (id, type, data.object.id), is 400 validation_failed.",
        tags: ["Credits"],
        security: [],
      },
    },
  );
}
