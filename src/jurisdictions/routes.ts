import { Elysia, t } from "elysia";
import { listEnabledJurisdictions } from "../auth/store";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { operation } from "../http/operation";

export const JurisdictionSchema = t.Object(
  {
    slug: t.String({ examples: ["us-ny"] }),
    name: t.String({ examples: ["New York"] }),
    description: t.String(),
  },
  { title: "Jurisdiction" },
);

export function jurisdictionRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .get("/jurisdictions", ({ auth }) => ({ jurisdictions: listEnabledJurisdictions(deps.db, auth.orgId) }), {
      response: { 200: t.Object({ jurisdictions: t.Array(JurisdictionSchema) }, { title: "JurisdictionList" }) },
      detail: operation({
        operationId: "listJurisdictions",
        summary: "List the organisation's jurisdictions",
        description: "Only the jurisdictions enabled for the caller's organisation. Free.",
        tag: "Knowledge base",
      }),
    });
}
