import { t } from "elysia";
import { isoFromMs } from "../clock";
import { Integer } from "../http/schema";
import type { LedgerEntry } from "./store";

export const CreditBalanceSchema = t.Object(
  {
    balancePence: Integer({ description: "Σ top_up, grant, settle and adjustment entries." }),
    heldPence: Integer({ description: "Pence held for runs still in progress." }),
    availablePence: Integer({ description: "balancePence − heldPence: what new work may spend." }),
    currency: t.Literal("GBP"),
  },
  { title: "CreditBalance" },
);

export const LedgerEntrySchema = t.Object(
  {
    id: t.String({ description: "UUIDv7 (time-sortable).", examples: ["0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e"] }),
    type: t.Union(
      [t.Literal("top_up"), t.Literal("grant"), t.Literal("reserve"), t.Literal("settle"), t.Literal("release"), t.Literal("adjustment")],
    ),
    amountPence: Integer({
      description:
        "Signed by the entry's effect on available credit: top_up, grant, release and refunds are positive; reserve and settle are negative.",
    }),
    currency: t.Literal("GBP"),
    description: t.String(),
    createdAt: t.String({ format: "date-time" }),
  },
  { title: "LedgerEntry" },
);

export function ledgerEntryBody(entry: LedgerEntry) {
  return {
    id: entry.id,
    type: entry.type,
    amountPence: entry.amountPence,
    currency: entry.currency,
    description: entry.description,
    createdAt: isoFromMs(entry.createdAtMs),
  };
}
