import { t } from "elysia";
import { screeningPencePerKeyword } from "../../billing/pricing";
import { Integer, Text } from "../../http/schema";
import { CreatedSchema, ScreeningSchema, screeningBody } from "../../screenings/routes";
import {
  createScreening,
  getScreening,
  SCREENING_KEYWORD_CHARS_MAX,
  SCREENING_KEYWORDS_MAX,
  SCREENING_TOP_K_DEFAULT,
  SCREENING_TOP_K_MAX,
  type Screening,
} from "../../screenings/service";
import { JurisdictionSlugs } from "../../search/schemas";
import { citationLine, defineTool, IdempotencyKeyArgument } from "../tool";

const SCREENING_ID_CHARS_MAX = 100;
/** Matches per keyword the text rendering names; the structured content has them all. */
const RENDERED_MATCHES_MAX = 3;

/** POST /v1/screenings as a tool: the same create path, hold and idempotency by operation id. */
export const screenKeywords = defineTool({
  name: "screen_keywords",
  title: "Start a keyword screening",
  price: `${screeningPencePerKeyword} pence per keyword, held when it starts and charged when it completes (nothing if it fails)`,
  description:
    `Screens up to ${SCREENING_KEYWORDS_MAX} keywords or phrases against the knowledge base in the background, each with the same ` +
    "search as search_regulations, and returns the screening's id at once (status pending). Call get_screening with that id " +
    `until its status is completed (results, one entry per keyword in order) or failed. Costs ${screeningPencePerKeyword} pence per ` +
    "keyword: held when the screening starts (the error insufficient_credit if available credit cannot cover it; nothing is " +
    "created) and charged when it completes; a failed screening charges nothing.",
  input: t.Object(
    {
      keywords: t.Array(Text({ minLength: 1, maxLength: SCREENING_KEYWORD_CHARS_MAX, notBlank: true }), {
        minItems: 1,
        maxItems: SCREENING_KEYWORDS_MAX,
        description: `1 to ${SCREENING_KEYWORDS_MAX} keywords or phrases, each 1 to ${SCREENING_KEYWORD_CHARS_MAX} characters, e.g. ["breach notification", "data protection officer"].`,
      }),
      jurisdictions: t.Optional(
        JurisdictionSlugs("Jurisdiction slugs to screen against, from list_jurisdictions. Omit for every jurisdiction enabled for the organisation."),
      ),
      topK: t.Optional(
        Integer({ minimum: 1, maximum: SCREENING_TOP_K_MAX, default: SCREENING_TOP_K_DEFAULT, description: `Matches per keyword: 1 to ${SCREENING_TOP_K_MAX}, default ${SCREENING_TOP_K_DEFAULT}.` }),
      ),
      idempotencyKey: t.Optional(IdempotencyKeyArgument),
    },
    { additionalProperties: false },
  ),
  output: CreatedSchema,
  readOnly: false,
  run({ deps, orgId, operationId }, args) {
    const created = createScreening(deps, orgId, operationId, { keywords: args.keywords, jurisdictions: args.jurisdictions, topK: args.topK }, { via: "MCP" });
    return {
      structured: { ...created },
      text:
        `Screening ${created.id} started (status ${created.status}): ${args.keywords.length} keyword${args.keywords.length === 1 ? "" : "s"}, ` +
        `${created.estimatedCostPence} pence held until it completes. Call get_screening with id ${created.id} for the results.`,
    };
  },
});

/** GET /v1/screenings/{id} as a tool. */
export const getScreeningTool = defineTool({
  name: "get_screening",
  title: "Get a screening",
  price: "free",
  description:
    "A screening started by screen_keywords: its status (pending, running, completed or failed) and, once completed, the matches " +
    "for each keyword in the order given, with their citations. An unknown id, or another organisation's, is the error not_found. Free.",
  input: t.Object(
    { id: Text({ minLength: 1, maxLength: SCREENING_ID_CHARS_MAX, notBlank: true, description: "The id screen_keywords returned." }) },
    { additionalProperties: false },
  ),
  output: ScreeningSchema,
  readOnly: true,
  run({ deps, orgId }, args) {
    const screening = getScreening(deps, orgId, args.id);
    return { structured: screeningBody(screening), text: renderScreening(screening) };
  },
});

function renderScreening(screening: Screening): string {
  const lines = [`Screening ${screening.id}: ${screening.status}.`];
  if (screening.error !== undefined) lines.push(`Error: ${screening.error}`);
  if (screening.status === "pending" || screening.status === "running") lines.push("Call get_screening again shortly for the results.");
  for (const result of screening.results ?? []) {
    lines.push("", `"${result.keyword}": ${result.matches.length} match${result.matches.length === 1 ? "" : "es"}`);
    for (const match of result.matches.slice(0, RENDERED_MATCHES_MAX)) lines.push(`  - ${citationLine(match)} · score ${match.score}`);
  }
  return lines.join("\n");
}
