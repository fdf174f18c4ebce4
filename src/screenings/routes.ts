import { Elysia, t } from "elysia";
import { isoFromMs } from "../clock";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { idempotency } from "../http/idempotency";
import { operation } from "../http/operation";
import { Integer, Text, UuidParams } from "../http/schema";
import { JurisdictionSlugs, SearchMatchSchema } from "../search/schemas";
import {
  createScreening,
  getScreening,
  SCREENING_KEYWORD_CHARS_MAX,
  SCREENING_KEYWORDS_MAX,
  SCREENING_TOP_K_DEFAULT,
  SCREENING_TOP_K_MAX,
  type Screening,
} from "./service";

const CreateScreeningBody = t.Object(
  {
    keywords: t.Array(Text({ minLength: 1, maxLength: SCREENING_KEYWORD_CHARS_MAX, notBlank: true }), {
      minItems: 1,
      maxItems: SCREENING_KEYWORDS_MAX,
      description: `1 to ${SCREENING_KEYWORDS_MAX} keywords, each 1 to ${SCREENING_KEYWORD_CHARS_MAX} characters (Unicode code points) and not blank.`,
      examples: [["breach notification", "data protection officer"]],
    }),
    jurisdictions: t.Optional(JurisdictionSlugs("Slugs enabled for the organisation. Omitted: every jurisdiction enabled for the organisation.")),
    topK: t.Optional(
      Integer({ minimum: 1, maximum: SCREENING_TOP_K_MAX, default: SCREENING_TOP_K_DEFAULT, description: `Matches per keyword: 1 to ${SCREENING_TOP_K_MAX}, default ${SCREENING_TOP_K_DEFAULT}.` }),
    ),
  },
  { title: "ScreeningRequest" },
);

export const CreatedSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Literal("pending"),
    estimatedCostPence: Integer({ description: "keywords × 2p, held until the run finishes." }),
  },
  { title: "ScreeningCreated" },
);

export const ScreeningSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Union([t.Literal("pending"), t.Literal("running"), t.Literal("completed"), t.Literal("failed")]),
    keywords: t.Array(t.String()),
    jurisdictions: t.Array(t.String(), { description: "The jurisdictions searched, resolved when the screening was created." }),
    results: t.Optional(
      t.Array(t.Object({ keyword: t.String(), matches: t.Array(SearchMatchSchema) }, { title: "ScreeningResult" }), {
        description: "Present once status is completed: one entry per keyword, in the order given.",
      }),
    ),
    error: t.Optional(t.String({ description: "Present when status is failed." })),
    createdAt: t.String({ format: "date-time" }),
    completedAt: t.Optional(t.String({ format: "date-time", description: "Present once status is completed or failed." })),
  },
  { title: "ScreeningRun" },
);

export function screeningBody(s: Screening) {
  return {
    id: s.id,
    status: s.status,
    keywords: s.keywords,
    jurisdictions: s.jurisdictions,
    ...(s.results ? { results: s.results } : {}),
    ...(s.error !== undefined ? { error: s.error } : {}),
    createdAt: isoFromMs(s.createdAtMs),
    ...(s.completedAtMs !== undefined ? { completedAt: isoFromMs(s.completedAtMs) } : {}),
  };
}

export function screeningRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .use(idempotency(deps))
    .post(
      "/screenings",
      ({ auth, body, operationId, set }) => {
        const created = createScreening(deps, auth.orgId, operationId, body);
        set.status = 202;
        return created;
      },
      {
        body: CreateScreeningBody,
        response: { 202: CreatedSchema },
        detail: operation({
          operationId: "createScreening",
          summary: "Start a keyword screening",
          description: `Screens up to ${SCREENING_KEYWORDS_MAX} keywords against the knowledge base in the background, each with
the same hybrid search as POST /v1/search (topK 1–${SCREENING_TOP_K_MAX}, default ${SCREENING_TOP_K_DEFAULT}). Holds keywords × 2p
(ledger reserve) and returns 202 with status pending; poll GET /v1/screenings/{id}. On completion the actual cost
(keywords × 2p) is settled and the hold released in one step; a failed screening releases the hold and charges nothing.
Nothing is created when the request is refused (402 insufficient_credit included).`,
          tag: "Screenings",
          errors: ["invalid_jurisdictions", "insufficient_credit"],
        }),
      },
    )
    .get("/screenings/:id", ({ auth, params }) => screeningBody(getScreening(deps, auth.orgId, params.id)), {
      params: UuidParams,
      response: { 200: ScreeningSchema },
      detail: operation({
        operationId: "getScreening",
        summary: "Get a screening",
        description: `Status pending → running → completed (results set, one per keyword in order) or failed (error set,
nothing charged). A screening interrupted by a restart is picked up again and still charged once.
An unknown or malformed id, or another organisation's screening, is 404 not_found. Free.`,
        tag: "Screenings",
      }),
    });
}
