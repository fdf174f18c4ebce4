import { Elysia, t } from "elysia";
import { isoFromMs } from "../clock";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { commonErrors, ErrorBody } from "../http/errors";
import { IDEMPOTENCY_KEY_PARAMETER, idempotency } from "../http/idempotency";
import { SEARCH_JURISDICTIONS_MAX } from "../search/service";
import {
  createScreening,
  getScreening,
  screeningRunKind,
  SCREENING_KEYWORD_CHARS_MAX,
  SCREENING_KEYWORDS_MAX,
  SCREENING_TOP_K_DEFAULT,
  SCREENING_TOP_K_MAX,
  type Screening,
} from "./service";

const SearchMatchSchema = t.Object(
  {
    content: t.String(),
    score: t.Number(),
    source: t.Optional(t.String()),
    citationPath: t.Optional(t.String()),
    jurisdictionSlugs: t.Optional(t.Array(t.String())),
  },
  { additionalProperties: true },
);

const CreateScreeningBody = t.Object({
  keywords: t.Array(t.String({ minLength: 1, maxLength: SCREENING_KEYWORD_CHARS_MAX, pattern: "\\S" }), {
    minItems: 1,
    maxItems: SCREENING_KEYWORDS_MAX,
    description: `1 to ${SCREENING_KEYWORDS_MAX} keywords, each 1 to ${SCREENING_KEYWORD_CHARS_MAX} characters and not blank.`,
  }),
  jurisdictions: t.Optional(
    t.Array(t.String({ maxLength: 64 }), {
      minItems: 1,
      maxItems: SEARCH_JURISDICTIONS_MAX,
      description: "Slugs enabled for the organisation. Omitted: every jurisdiction enabled for the organisation.",
    }),
  ),
  topK: t.Optional(t.Integer({ minimum: 1, maximum: SCREENING_TOP_K_MAX, default: SCREENING_TOP_K_DEFAULT })),
});

const CreatedSchema = t.Object({
  id: t.String({ format: "uuid" }),
  status: t.Literal("pending"),
  estimatedCostPence: t.Integer({ description: "keywords × 2p, held until the run finishes." }),
});

const ScreeningSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Union([t.Literal("pending"), t.Literal("running"), t.Literal("completed"), t.Literal("failed")]),
    keywords: t.Array(t.String()),
    jurisdictions: t.Array(t.String(), { description: "The jurisdictions searched, resolved when the screening was created." }),
    results: t.Optional(
      t.Array(t.Object({ keyword: t.String(), matches: t.Array(SearchMatchSchema) }), {
        description: "Present once status is completed: one entry per keyword, in the order given.",
      }),
    ),
    error: t.Optional(t.String({ description: "Present when status is failed." })),
    createdAt: t.String({ format: "date-time" }),
    completedAt: t.Optional(t.String({ format: "date-time", description: "Present once status is completed or failed." })),
  },
  { title: "ScreeningRun" },
);

function screeningBody(s: Screening) {
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
  deps.jobs.register(screeningRunKind(deps));
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey(deps))
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
        response: { 202: CreatedSchema, 402: ErrorBody, 409: ErrorBody, ...commonErrors },
        detail: {
          parameters: [IDEMPOTENCY_KEY_PARAMETER],
          summary: "Start a keyword screening",
          description: `Screens up to ${SCREENING_KEYWORDS_MAX} keywords against the knowledge base in the background, each with
the same hybrid search as POST /v1/search (topK 1–${SCREENING_TOP_K_MAX}, default ${SCREENING_TOP_K_DEFAULT}). Holds keywords × 2p
(ledger reserve) and returns 202 with status pending; poll GET /v1/screenings/{id}. On completion the actual cost
(keywords × 2p) is settled and the hold released in one step; a failed screening releases the hold and charges nothing.
Errors: 400 validation_failed, 400 invalid_jurisdictions (a slug unknown or not enabled for the organisation),
402 insufficient_credit (nothing is created), 409 idempotency_key_reused.`,
          tags: ["Screenings"],
        },
      },
    )
    .get("/screenings/:id", ({ auth, params }) => screeningBody(getScreening(deps, auth.orgId, params.id)), {
      params: t.Object({ id: t.String() }),
      response: { 200: ScreeningSchema, 404: ErrorBody, ...commonErrors },
      detail: {
        summary: "Get a screening",
        description: `Status pending → running → completed (results set, one per keyword in order) or failed (error set,
nothing charged). A screening interrupted by a restart is picked up again and still charged once.
404 not_found for an unknown or malformed id, or another organisation's screening. Free.`,
        tags: ["Screenings"],
      },
    });
}
