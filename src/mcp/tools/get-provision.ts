import { t } from "elysia";
import { Text } from "../../http/schema";
import { findProvision, type Provision } from "../../search/provisions";
import { resolveJurisdictions } from "../../search/service";
import { defineTool } from "../tool";

const CITATION_CHARS_MAX = 200;

const ProvisionPassageSchema = t.Object(
  {
    content: t.String({ description: "The passage text." }),
    source: t.String({ description: "Title of the instrument or the uploaded document's filename." }),
    citationPath: t.String({ description: "Where the passage sits, outermost first, separated by \" > \"." }),
    jurisdictionSlugs: t.Array(t.String()),
    title: t.Optional(t.String({ description: "Title of the provision, when it has one." })),
  },
  { title: "ProvisionPassage" },
);

const ProvisionSchema = t.Object(
  {
    citation: t.String({ description: "The provision as found: \"GDPR Article 33\", \"12 CFR 1003.4(a)\", \"N.Y. Gen. Bus. Law § 899-aa\"." }),
    source: t.String(),
    heading: t.String({ description: "The heading of the article or section, as indexed." }),
    jurisdictionSlugs: t.Array(t.String()),
    passages: t.Array(ProvisionPassageSchema, { description: "Every passage of the provision, in document order." }),
  },
  { title: "Provision" },
);

/** The full text of one article or section, free, within the organisation's enabled jurisdictions. */
export const getProvision = defineTool({
  name: "get_provision",
  title: "Read a provision",
  price: "free",
  description:
    "The full text of one article or section of the knowledge base, every passage in document order with its citation. " +
    "Give the provision and, to be sure of the instrument, its name or abbreviation as in citations: \"GDPR Article 33\", " +
    "\"N.Y. Gen. Bus. Law § 899-aa\", \"12 CFR 1003.4\", or a paragraph (\"GDPR Article 33(1)\"). Only the jurisdictions " +
    "enabled for the organisation are read: another jurisdiction's provision, or one the knowledge base does not hold, is the " +
    "error not_found (its details name a close match when there is one). The resource regkb://jurisdictions/{slug}/provisions " +
    "lists every citation this tool reads. Free.",
  input: t.Object(
    {
      citation: Text({
        minLength: 1,
        maxLength: CITATION_CHARS_MAX,
        notBlank: true,
        description: `The provision to read, e.g. "GDPR Article 33", "12 CFR 1003.4", "Cal. Civ. Code § 1798.82"; 1 to ${CITATION_CHARS_MAX} characters.`,
        examples: ["GDPR Article 33"],
      }),
    },
    { additionalProperties: false },
  ),
  output: ProvisionSchema,
  readOnly: true,
  run({ deps, orgId }, args) {
    const provision = findProvision(deps.searchIndex.db, orgId, resolveJurisdictions(deps, orgId), args.citation, "arguments.citation");
    return { structured: { ...provision }, text: renderProvision(provision) };
  },
});

function renderProvision(provision: Provision): string {
  const lines = [`${provision.citation} — ${provision.source} [${provision.jurisdictionSlugs.join(", ")}]`];
  if (provision.heading !== "" && provision.heading !== provision.citation) lines.push(provision.heading);
  for (const passage of provision.passages) lines.push("", `[${passage.citationPath}]`, passage.content);
  return lines.join("\n");
}
