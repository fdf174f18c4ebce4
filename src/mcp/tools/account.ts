import { t } from "elysia";
import { listEnabledJurisdictions } from "../../auth/store";
import { getBalance } from "../../billing/ledger";
import { CreditBalanceSchema } from "../../billing/schemas";
import { DocumentSchema } from "../../documents/routes";
import { listDocuments } from "../../documents/service";
import { JurisdictionSchema } from "../../jurisdictions/routes";
import { defineTool, NoArguments } from "../tool";

/** GET /v1/jurisdictions as a tool. */
export const listJurisdictionsTool = defineTool({
  name: "list_jurisdictions",
  title: "List jurisdictions",
  price: "free",
  description:
    "The jurisdictions enabled for this organisation (slug, name, description): the only ones search_regulations, screen_keywords " +
    "and get_provision read. Pass slugs from here as their jurisdictions argument. Free.",
  input: NoArguments,
  output: t.Object({ jurisdictions: t.Array(JurisdictionSchema) }, { title: "JurisdictionList" }),
  readOnly: true,
  run({ deps, orgId }) {
    const jurisdictions = listEnabledJurisdictions(deps.db, orgId);
    return {
      structured: { jurisdictions },
      text: jurisdictions.length === 0 ? "No jurisdiction is enabled for this organisation." : jurisdictions.map((j) => `${j.slug} — ${j.name}: ${j.description}`).join("\n"),
    };
  },
});

/** GET /v1/credits as a tool. */
export const getBalanceTool = defineTool({
  name: "get_balance",
  title: "Credit balance",
  price: "free",
  description:
    "The organisation's prepaid credit in pence (GBP): balance, pence held for screenings in progress, and available = balance − held, " +
    "which is what a paid tool may spend. Free.",
  input: NoArguments,
  output: CreditBalanceSchema,
  readOnly: true,
  run({ deps, orgId }) {
    const balance = getBalance(deps.db, orgId);
    return {
      structured: { ...balance },
      text: `Available ${balance.availablePence} pence (balance ${balance.balancePence}, held ${balance.heldPence}), ${balance.currency}.`,
    };
  },
});

/** GET /v1/documents as a tool. */
export const listDocumentsTool = defineTool({
  name: "list_documents",
  title: "List the organisation's documents",
  price: "free",
  description:
    "The organisation's own uploaded policy documents (newest first, at most 1000) with their status: ready documents are searched " +
    "by search_regulations beside the law, under their filename as source. Free.",
  input: NoArguments,
  output: t.Object({ documents: t.Array(DocumentSchema) }, { title: "DocumentList" }),
  readOnly: true,
  run({ deps, orgId }) {
    const documents = listDocuments(deps, orgId);
    const lines = documents.map((d) => {
      const where = d.jurisdictionSlugs.length === 0 ? "every jurisdiction" : d.jurisdictionSlugs.join(", ");
      return `${d.filename} — ${d.status}, ${d.pages ?? "?"} pages, ${where} (id ${d.id})`;
    });
    return { structured: { documents }, text: lines.length === 0 ? "The organisation has no documents." : lines.join("\n") };
  },
});
