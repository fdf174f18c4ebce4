import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { idempotency } from "../http/idempotency";
import { operation } from "../http/operation";
import { SearchBody, SearchResponse } from "./schemas";
import { performSearch } from "./perform";

/** On every search answered by a node serving from PostgreSQL. */
export const INDEX_BEHIND_HEADER = "regkb-index-behind-ms";

export function searchRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .use(idempotency(deps))
    .post(
      "/search",
      ({ auth, body, operationId, set }) => {
        // A node of several (PostgreSQL) says how stale its own index may be: 0 when nothing is known to be pending.
        if (deps.replica) set.headers[INDEX_BEHIND_HEADER] = String(deps.replica.behindMs());
        return performSearch(deps, { orgId: auth.orgId, query: body.query, jurisdictions: body.jurisdictions, topK: body.topK, operationId });
      },
      {
        body: SearchBody,
        response: { 200: SearchResponse },
        detail: operation({
          operationId: "search",
          summary: "Search the knowledge base",
          description:
            "Hybrid search (BM25 over citation, heading and text, plus embedding KNN, fused) of the shared corpus in the requested " +
            "jurisdictions and the organisation's own ready documents (those without jurisdictions match every search). A query " +
            "that cites a provision (\"Article 33\", \"§ 899-aa\", \"1798.82\", \"12 CFR 1003.4(a)\") returns that passage first. " +
            "Costs 2 pence, charged before the search runs: 402 insufficient_credit when available credit is below 2 pence. " +
            "400 invalid_jurisdictions when a slug is unknown or not enabled for the organisation.",
          tag: "Knowledge base",
          errors: ["invalid_jurisdictions", "insufficient_credit"],
        }),
      },
    );
}
