import { Elysia, t } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { payloadTooLarge } from "../errors";
import { idempotency } from "../http/idempotency";
import { operation } from "../http/operation";
import { Integer } from "../http/schema";
import { getBalance } from "./ledger";
import { CreditBalanceSchema, LedgerEntrySchema, ledgerEntryBody } from "./schemas";
import { listEntries } from "./store";
import { createTopUp, handlePaymentWebhook, TOP_UP_PENCE_MAX, TOP_UP_PENCE_MIN, WEBHOOK_BODY_BYTES_MAX } from "./top-ups";

export const LEDGER_PAGE_DEFAULT = 50;
export const LEDGER_PAGE_MAX = 200;
/** Deep offsets cost an index walk of that many rows; this keeps one page under a few ms. */
export const LEDGER_OFFSET_MAX = 1_000_000;

export function creditRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .use(idempotency(deps))
    .get("/credits", ({ auth }) => getBalance(deps.db, auth.orgId), {
      response: { 200: CreditBalanceSchema },
      detail: operation({
        operationId: "getCredits",
        summary: "Credit balance",
        description: "The organisation's balance, pence held for runs in progress, and available = balance − held. Free.",
        tag: "Credits",
      }),
    })
    .get(
      "/credits/ledger",
      ({ auth, query }) => ({
        entries: listEntries(deps.db, auth.orgId, query.limit ?? LEDGER_PAGE_DEFAULT, query.offset ?? 0).map(ledgerEntryBody),
      }),
      {
        query: t.Object({
          limit: t.Optional(
            Integer({ minimum: 1, maximum: LEDGER_PAGE_MAX, default: LEDGER_PAGE_DEFAULT, description: `Entries per page: 1 to ${LEDGER_PAGE_MAX}, default ${LEDGER_PAGE_DEFAULT}.` }),
          ),
          offset: t.Optional(
            Integer({ minimum: 0, maximum: LEDGER_OFFSET_MAX, default: 0, description: `Entries to skip: 0 to ${LEDGER_OFFSET_MAX}, default 0.` }),
          ),
        }),
        response: { 200: t.Object({ entries: t.Array(LedgerEntrySchema) }, { title: "LedgerPage" }) },
        detail: operation({
          operationId: "listLedgerEntries",
          summary: "Ledger entries",
          description:
            "Immutable entries, newest first (ties broken by id); page with limit and offset (plain decimal integers). Free.",
          tag: "Credits",
        }),
      },
    )
    .post("/top-ups", ({ auth, body, operationId }) => createTopUp(deps, { orgId: auth.orgId, amountPence: body.amountPence, orderId: operationId }), {
      body: t.Object(
        {
          amountPence: Integer({
            minimum: TOP_UP_PENCE_MIN,
            maximum: TOP_UP_PENCE_MAX,
            description: `${TOP_UP_PENCE_MIN} to ${TOP_UP_PENCE_MAX} pence (£10 to £1,000).`,
            examples: [2000],
          }),
        },
        { title: "TopUpRequest" },
      ),
      response: {
        200: t.Object(
          {
            orderId: t.String({ format: "uuid", description: "UUIDv7 of the top-up order." }),
            checkoutUrl: t.String({ description: "Hosted checkout page to send the payer to." }),
            amountPence: Integer(),
          },
          { title: "TopUp" },
        ),
      },
      detail: operation({
        operationId: "createTopUp",
        summary: "Start a card top-up",
        description:
          "Creates a hosted Stripe Checkout (GBP) for amountPence and returns its URL. Credit lands as one " +
          "`top_up` ledger entry when the payment completes (verified webhook), never before. 503 payments_unavailable when " +
          "no payment provider is configured (operators then credit with `regkb credits top-up`).",
        tag: "Credits",
        errors: ["payments_unavailable"],
      }),
    });
}

/** Stripe calls this; it carries no bearer key, only the Stripe-Signature over the raw body. */
export function stripeWebhookRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" }).post(
    "/webhooks/stripe",
    async ({ request }) => {
      const declaredBytes = Number(request.headers.get("content-length") ?? "0");
      if (declaredBytes > WEBHOOK_BODY_BYTES_MAX) throw payloadTooLarge(WEBHOOK_BODY_BYTES_MAX, declaredBytes);
      const raw = await request.text();
      const bodyBytes = Buffer.byteLength(raw);
      if (bodyBytes > WEBHOOK_BODY_BYTES_MAX) throw payloadTooLarge(WEBHOOK_BODY_BYTES_MAX, bodyBytes);
      const outcome = await handlePaymentWebhook(deps, raw, request.headers.get(deps.payments.signatureHeader));
      return { received: true, outcome };
    },
    {
      parse: "none",
      response: { 200: t.Object({ received: t.Boolean(), outcome: t.String() }, { title: "StripeWebhookReceipt" }) },
      detail: operation({
        operationId: "receiveStripeWebhook",
        summary: "Stripe webhook",
        description:
          "For Stripe only: no bearer key; the Stripe-Signature header is verified against the raw body with " +
          "REGKB_STRIPE_WEBHOOK_SECRET (300 s tolerance). checkout.session.completed (payment_status paid) and " +
          "checkout.session.async_payment_succeeded credit the stored order's amount exactly once. Unknown orders and other " +
          "event types are acknowledged with 200 and ignored; a bad signature is 400 invalid_signature; a signed body that is not " +
          "JSON, or a checkout event without the fields it needs (id, type, data.object.id), is 400 validation_failed.",
        tag: "Credits",
        public: true,
        errors: ["validation_failed", "invalid_signature", "payload_too_large", "payments_unavailable", "storage_full"],
        requestBody: {
          required: true,
          content: { "application/json": { schema: { type: "object", description: "A Stripe event, exactly as Stripe signed it." } } },
        },
      }),
    },
  );
}
