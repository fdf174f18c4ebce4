/**
 * One paid search, as POST /v1/search and the dashboard playground both sell it: resolve the
 * jurisdictions, charge, search, report the balance. Kept apart from service.ts, which never
 * touches money, so screenings (which hold credit per run) reuse the search without a charge.
 */
import type { SqlDatabase } from "../db/sql-database";
import { chargeRefundable, getBalance, refundCharge } from "../billing/ledger";
import { ledgerKeys } from "../billing/ledger-keys";
import { searchPence } from "../billing/pricing";
import type { SearchDeps } from "./search-index";
import { SEARCH_TOP_K_DEFAULT, type SearchMatch } from "./request";
import { resolveJurisdictions, searchKnowledgeBase } from "./service";

export interface PerformSearchDeps extends SearchDeps {
  db: SqlDatabase;
  clock: { nowMs(): number };
}

export interface PerformSearchInput {
  orgId: string;
  query: string;
  /** Omitted: every jurisdiction enabled for the organisation (400 invalid_jurisdictions for others). */
  jurisdictions?: string[];
  topK?: number;
  /** The request's operation id: the ledger key and ref, and the reply's requestId. */
  operationId: string;
  /** Where the search came from when not the API or the dashboard: named in the ledger ("Search (MCP)"). */
  via?: "MCP";
}

export interface PerformSearchResult {
  requestId: string;
  results: SearchMatch[];
  creditsChargedPence: number;
  availablePence: number;
}

export async function performSearch(deps: PerformSearchDeps, input: PerformSearchInput): Promise<PerformSearchResult> {
  const jurisdictions = resolveJurisdictions(deps, input.orgId, input.jurisdictions);
  // Charged before the work, so a 402 means nothing ran. The key derives from the operation
  // id: an idempotent retry finds this entry instead of charging again.
  const charged = chargeRefundable(deps.db, {
    orgId: input.orgId,
    amountPence: searchPence,
    key: ledgerKeys.search(input.operationId),
    description: input.via ? `Search (${input.via})` : "Search",
    ref: input.operationId,
    nowMs: deps.clock.nowMs(),
  });
  let results: SearchMatch[];
  try {
    results = await searchKnowledgeBase(deps, {
      orgId: input.orgId,
      query: input.query,
      jurisdictions,
      topK: input.topK ?? SEARCH_TOP_K_DEFAULT,
    });
  } catch (error) {
    // No request is both failed and charged: the refund commits before the error is answered.
    refundCharge(deps.db, { charge: charged, description: `Refund: the search${input.via ? ` (${input.via})` : ""} failed`, nowMs: deps.clock.nowMs() });
    throw error;
  }
  return {
    requestId: input.operationId,
    results,
    creditsChargedPence: searchPence,
    availablePence: getBalance(deps.db, input.orgId).availablePence,
  };
}
