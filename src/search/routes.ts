import { Elysia } from "elysia";
import { getBalance, charge } from "../billing/ledger";
import { searchPence } from "../billing/pricing";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { commonErrors, ErrorBody } from "../http/errors";
import { idempotency } from "../http/idempotency";
import { SearchBody, SearchResponse } from "./schemas";
import { resolveJurisdictions, searchKnowledgeBase, SEARCH_TOP_K_DEFAULT } from "./service";

export function searchRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey(deps))
    .use(idempotency(deps))
    .post(
      "/search",
      async ({ auth, body, operationId }) => {
        const jurisdictions = resolveJurisdictions(deps, auth.orgId, body.jurisdictions);
        // Charged before the work: a 402 means nothing ran. The key derives from the
        // operation id, so an idempotent retry finds this entry instead of charging again.
        charge(deps.db, {
          orgId: auth.orgId,
          amountPence: searchPence,
          key: `search:${operationId}`,
          description: "Search",
          ref: operationId,
          nowMs: deps.clock.nowMs(),
        });
        const results = await searchKnowledgeBase(deps, {
          orgId: auth.orgId,
          query: body.query,
          jurisdictions,
          topK: body.topK ?? SEARCH_TOP_K_DEFAULT,
        });
        return {
          requestId: operationId,
          results,
          creditsChargedPence: searchPence,
          availablePence: getBalance(deps.db, auth.orgId).availablePence,
        };
      },
      {
        body: SearchBody,
        response: { 200: SearchResponse, 402: ErrorBody, 409: ErrorBody, ...commonErrors },
        detail: {
          summary: "Search the knowledge base",
          description:
            "Hybrid search (BM25 over citation, heading and text, plus embedding KNN, fused) of the shared corpus in the requested " +
            "jurisdictions and the organisation's own ready documents (those without jurisdictions match every search). A query " +
            "that cites a provision (\"Article 33\", \"§ 899-aa\", \"1798.82\", \"12 CFR 1003.4(a)\") returns that passage first. " +
            "Costs 2 pence, charged before the search runs: 402 insufficient_credit when available credit is below 2 pence. " +
            "400 invalid_jurisdictions when a slug is unknown or not enabled for the organisation.",
          tags: ["Knowledge base"],
        },
      },
    );
}
