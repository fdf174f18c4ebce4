/**
 * Every ledger entry's idempotency key, and what the entry is for. A key names one money
 * movement so that a replayed step finds its entry instead of moving money twice (the
 * UNIQUE index on ledger_entries.idempotency_key); its purpose is stored beside it (migration
 * 011), so reads ask for a purpose instead of matching key prefixes.
 *
 * The key formats are the ones every earlier version wrote: a retry across an upgrade must
 * find the entry the old version wrote. Migration 011 classifies old entries by the same
 * prefixes; change a format here and old replays stop matching.
 */
import { uuidv7 } from "../ids";

/** The kinds of ledger entry (ledger_entries.type). */
export type LedgerEntryType = "top_up" | "grant" | "reserve" | "settle" | "release" | "adjustment";

/** Each purpose and the one entry type it is written as. */
export const LEDGER_PURPOSES = {
  /** A search's charge (POST /v1/search, the dashboard, MCP): `search:<operationId>`, a retry after a refund `…:retry-<n>`. */
  search: "settle",
  /** A failed search's refund: `refund:<its charge's key>`. */
  search_refund: "adjustment",
  /** A document's ingestion charge: `doc:<documentId>`. */
  document: "settle",
  /** A failed ingestion's refund: `refund:<documentId>`. */
  document_refund: "adjustment",
  /** A run's hold (screenings, executions): `reserve:<runId>`. */
  run_hold: "reserve",
  /** A finished run's cost: `settle:<runId>`. */
  run_settle: "settle",
  /** A run's hold returned: `release:<runId>`. */
  run_release: "release",
  /** Credit from a paid checkout: `topup:<orderId>`. */
  card_top_up: "top_up",
  /** Credit recorded by an operator: `topup:operator:<orgId>:<reference>`, or `topup:operator:<uuid>` without one. */
  operator_top_up: "top_up",
  /** The plan's allowance for a calendar month: `grant:<orgId>:<YYYY-MM>`. */
  monthly_grant: "grant",
  /** An operator's signed correction: `adjustment:<uuid>`. */
  operator_adjustment: "adjustment",
  /**
   * Written by an earlier version under a key no constructor here builds (migration 011's
   * fallback); its type says what it did. Never written now.
   */
  legacy: null,
} as const satisfies Record<string, LedgerEntryType | null>;

export type LedgerPurpose = keyof typeof LEDGER_PURPOSES;

declare const built: unique symbol;

/** A key with its purpose, made only by the constructors below. */
export interface LedgerKey<P extends LedgerPurpose = LedgerPurpose> {
  readonly key: string;
  readonly purpose: P;
  readonly [built]: true;
}

function make<P extends LedgerPurpose>(key: string, purpose: P): LedgerKey<P> {
  return { key, purpose } as LedgerKey<P>;
}

export const ledgerKeys = {
  search: (operationId: string) => make(`search:${operationId}`, "search"),
  /** Attempt n (from 1) of a charge whose earlier attempts were refunded: it pays again under its own key. */
  retryOf: (charge: LedgerKey<"search">, attempt: number) => make(`${charge.key}:retry-${attempt}`, "search"),
  refundOf: (charge: LedgerKey<"search">) => make(`refund:${charge.key}`, "search_refund"),
  document: (documentId: string) => make(`doc:${documentId}`, "document"),
  documentRefund: (documentId: string) => make(`refund:${documentId}`, "document_refund"),
  runHold: (runId: string) => make(`reserve:${runId}`, "run_hold"),
  runSettle: (runId: string) => make(`settle:${runId}`, "run_settle"),
  runRelease: (runId: string) => make(`release:${runId}`, "run_release"),
  cardTopUp: (orderId: string) => make(`topup:${orderId}`, "card_top_up"),
  /** With a reference, the same reference for the same organisation is the same top-up. */
  operatorTopUp: (orgId: string, reference?: string) =>
    make(reference === undefined ? `topup:operator:${uuidv7()}` : `topup:operator:${orgId}:${reference}`, "operator_top_up"),
  monthlyGrant: (orgId: string, month: string) => {
    const { before, after } = monthlyGrantKeyParts(month);
    return make(`${before}${orgId}${after}`, "monthly_grant");
  },
  operatorAdjustment: (id: string = uuidv7()) => make(`adjustment:${id}`, "operator_adjustment"),
};

/** The monthly grant key around an organisation id, for a query over many organisations at once. */
export function monthlyGrantKeyParts(month: string): { before: string; after: string } {
  return { before: "grant:", after: `:${month}` };
}
