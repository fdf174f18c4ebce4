import { t } from "elysia";
import { searchPence } from "../../billing/pricing";
import { Integer, Text } from "../../http/schema";
import { performSearch, type PerformSearchResult } from "../../search/perform";
import { JurisdictionSlugs, SearchResponse } from "../../search/schemas";
import { SEARCH_QUERY_CHARS_MAX, SEARCH_TOP_K_DEFAULT, SEARCH_TOP_K_MAX } from "../../search/request";
import { citationLine, clip, defineTool, IdempotencyKeyArgument } from "../tool";

/** Characters of each passage in the text rendering; the structured content has them whole. */
const EXCERPT_CHARS_MAX = 600;

/** POST /v1/search as a tool: performSearch, charged and refunded exactly as the API is. */
export const searchRegulations = defineTool({
  name: "search_regulations",
  title: "Search regulations",
  price: `${searchPence} pence per call`,
  description:
    "Hybrid (keyword + semantic) search of the regulatory knowledge base: the laws of the jurisdictions enabled for this " +
    "organisation and the organisation's own policy documents. Returns the best passages with their citation (citationPath, " +
    "source, jurisdictionSlugs) and a relevance score; quote citationPath and source when you rely on a passage. A query " +
    "that cites a provision (\"Article 33\", \"§ 899-aa\", \"12 CFR 1003.4\") returns that passage first; to read a whole " +
    `article or section use get_provision (free). Costs ${searchPence} pence, charged before the search: the error ` +
    "insufficient_credit means nothing ran and nothing was charged.",
  input: t.Object(
    {
      query: Text({
        minLength: 1,
        maxLength: SEARCH_QUERY_CHARS_MAX,
        notBlank: true,
        description: `What to find, as a question or keywords ("how fast must a breach be reported?") or a citation; 1 to ${SEARCH_QUERY_CHARS_MAX} characters.`,
      }),
      jurisdictions: t.Optional(
        JurisdictionSlugs(
          "Jurisdiction slugs to search, from list_jurisdictions. Omit to search every jurisdiction enabled for the organisation. " +
            "A slug that is unknown or not enabled is the error invalid_jurisdictions.",
        ),
      ),
      topK: t.Optional(
        Integer({ minimum: 1, maximum: SEARCH_TOP_K_MAX, default: SEARCH_TOP_K_DEFAULT, description: `Passages to return: 1 to ${SEARCH_TOP_K_MAX}, default ${SEARCH_TOP_K_DEFAULT}.` }),
      ),
      idempotencyKey: t.Optional(IdempotencyKeyArgument),
    },
    { additionalProperties: false },
  ),
  output: SearchResponse,
  readOnly: false,
  async run({ deps, orgId, operationId }, args) {
    const result = await performSearch(deps, { orgId, query: args.query, jurisdictions: args.jurisdictions, topK: args.topK, operationId, via: "MCP" });
    return { structured: { ...result }, text: renderSearch(result) };
  },
});

function renderSearch(result: PerformSearchResult): string {
  const count = result.results.length;
  const lines = [
    `${count} passage${count === 1 ? "" : "s"}, best first. Charged ${result.creditsChargedPence} pence; ${result.availablePence} pence available.`,
  ];
  result.results.forEach((match, i) => {
    lines.push("", `[${i + 1}] ${citationLine(match)} · score ${match.score}`, clip(match.content, EXCERPT_CHARS_MAX));
  });
  return lines.join("\n");
}
