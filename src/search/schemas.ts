import { t } from "elysia";
import { Integer, Text } from "../http/schema";
import { SEARCH_JURISDICTIONS_MAX, SEARCH_QUERY_CHARS_MAX, SEARCH_TOP_K_DEFAULT, SEARCH_TOP_K_MAX } from "./request";

/** The one SearchMatch: search results and screening matches alike. */
export const SearchMatchSchema = t.Object(
  {
    content: t.String({ description: "The passage text." }),
    score: t.Number({
      description:
        "Relevance, higher is better, 0 to 1: a weighted blend of the passage's BM25 (relative to the best of this query) and its " +
        "embedding similarity (relative to the best and worst candidates). 1 marks a passage the query cites exactly " +
        "(e.g. \"Article 33\", \"§ 899-aa\", \"1798.82\"); those come first. Comparable within one response only.",
    }),
    source: t.Optional(t.String({ description: "Title of the instrument or the uploaded document's filename." })),
    citationPath: t.Optional(
      t.String({ description: "Where the passage sits, outermost first, separated by \" > \".", examples: ["GDPR > Article 33 > 1–2", "N.Y. Gen. Bus. Law § 899-aa > 2"] }),
    ),
    jurisdictionSlugs: t.Optional(t.Array(t.String(), { description: "Jurisdictions the passage belongs to; [] for an organisation document that applies everywhere." })),
    title: t.Optional(
      t.String({ description: "Title of the provision the passage belongs to (e.g. \"Right to erasure ('right to be forgotten')\"), when it has one." }),
    ),
    highlights: t.Optional(
      t.Object(
        {
          snippet: t.String({ description: "A short extract around them; \"…\" marks a cut." }),
          terms: t.Array(t.String(), { description: "Words of the passage that matched the query or one of its expansions, as written there." }),
        },
        { description: "Why the passage matched: `terms`, the query words (or their expansions) found in it, and `snippet`, a short extract around them." },
      ),
    ),
  },
  { title: "SearchMatch" },
);

/** Slugs of jurisdictions to search; shared by searches and screenings. */
export const JurisdictionSlugs = (description: string) =>
  t.Array(Text({ maxLength: 64 }), { minItems: 1, maxItems: SEARCH_JURISDICTIONS_MAX, description, examples: [["eu", "us-ny"]] });

export const SearchBody = t.Object(
  {
    query: Text({
      minLength: 1,
      maxLength: SEARCH_QUERY_CHARS_MAX,
      notBlank: true,
      description: `1 to ${SEARCH_QUERY_CHARS_MAX} characters (Unicode code points), not blank.`,
      examples: ["How quickly must a breach be reported to the supervisory authority?"],
    }),
    jurisdictions: t.Optional(
      JurisdictionSlugs(
        "Slugs enabled for the organisation (400 invalid_jurisdictions otherwise). Omitted: every jurisdiction enabled for the organisation. Must not be empty.",
      ),
    ),
    topK: t.Optional(Integer({ minimum: 1, maximum: SEARCH_TOP_K_MAX, default: SEARCH_TOP_K_DEFAULT, description: `1 to ${SEARCH_TOP_K_MAX}, default ${SEARCH_TOP_K_DEFAULT}.` })),
  },
  { title: "SearchRequest" },
);

export const SearchResponse = t.Object(
  {
    requestId: t.String({ format: "uuid", description: "UUIDv7 of this search; the ledger entry's ref." }),
    results: t.Array(SearchMatchSchema, { description: "Best first; at most topK." }),
    creditsChargedPence: Integer({ description: "2 per search." }),
    availablePence: Integer({ description: "Available credit after the charge." }),
  },
  { title: "SearchResponse" },
);
