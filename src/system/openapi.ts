import { Elysia, t } from "elysia";
import { API_ERROR_CODES, ERRORS, type ApiErrorCode, type ErrorHeader, type ErrorSpec } from "../errors";
import { IDEMPOTENCY_KEY_PARAMETER } from "../http/idempotency";
import { API_TAGS, OPERATION_ERRORS_KEY, OPERATION_NO_IDEMPOTENCY_HEADER_KEY, PUBLIC_HIDDEN } from "../http/operation";
import { isApiPath, type RegisteredRoute, type RouteTable } from "../http/route-table";
import { VERSION } from "../version";
import { SchemaComponents, type JsonSchema } from "./json-schema";

const DESCRIPTION = `Prepaid, JSON-over-HTTP interface for hybrid (semantic + keyword) search of a
regulatory knowledge base, batch keyword screening, policy PDF ingestion and isolated
Python execution. All money amounts are integers in pence (GBP).

Authentication: \`Authorization: Bearer rk_live_…\` on every /v1 route except this
document and the Stripe webhook; without a valid key every route answers 401 before
anything else is looked at. JSON routes take \`Content-Type: application/json\` only (415
otherwise). Errors always use the Error body
\`{"error": "<stable_snake_case_code>", "details": "<human text>"}\`; each operation lists
the codes it can answer with. Every POST under /v1 accepts an \`Idempotency-Key\` header
(≤ 255 characters, kept 24 hours). Every response carries \`X-Request-Id\`.

AI assistants reach the same knowledge base, with the same keys, prices and rules, through
the Model Context Protocol at \`POST /mcp\` (the MCP tag).`;

/** The Error body of interface.md §7: a stable snake_case code from the error table and a human sentence. */
const ErrorBody = t.Object(
  {
    error: t.Union(
      API_ERROR_CODES.map((code) => t.Literal(code)),
      { description: "Stable snake_case code: what happened, for programs (the README's error table lists them)." },
    ),
    details: t.Optional(t.String({ description: "What happened, for people: names the field, the amounts or the request id." })),
  },
  { title: "Error" },
);

type OperationDetail = Record<string, unknown> & { hide?: boolean; security?: unknown; requestBody?: { content?: Record<string, { schema?: unknown }> } };

const HEADERS = {
  "X-Request-Id": {
    description:
      "The request's id: the client's own X-Request-Id echoed when it is 1–128 characters of A–Z, a–z, 0–9 and `._:-`, otherwise a new UUIDv7. Quote it when reporting a problem.",
    schema: { type: "string" },
  },
  "Idempotent-Replayed": {
    description: "`true` on the stored response to an earlier request with the same Idempotency-Key: nothing ran or was charged again.",
    schema: { type: "string", enum: ["true"] },
  },
  "WWW-Authenticate": { description: 'How to authenticate: `Bearer realm="regkb"`.', schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before trying again.", schema: { type: "integer", minimum: 1 } },
} as const satisfies Record<string, unknown> & Record<ErrorHeader, unknown>;

const headerRef = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const SUCCESS_DESCRIPTIONS: Record<string, string> = { "200": "OK", "201": "Created", "202": "Accepted: the work goes on in the background; poll for it." };

/** The served document, built from the routes once (they do not change while the server runs). */
export function openapiRoutes(routes: RouteTable) {
  let document: string | undefined;
  return new Elysia().get(
    "/v1/openapi.json",
    () => new Response((document ??= JSON.stringify(buildOpenApiDocument(routes.registered()))), { headers: { "content-type": "application/json; charset=utf-8" } }),
    { detail: PUBLIC_HIDDEN },
  );
}

export function buildOpenApiDocument(routes: readonly RegisteredRoute[]) {
  const components = new SchemaComponents();
  const errorSchema = components.toJson(ErrorBody);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!isApiPath(route.path) || route.hooks?.detail?.hide === true) continue;
    const path = route.path.replace(/:(\w+)/g, "{$1}");
    (paths[path] ??= {})[route.method.toLowerCase()] = describeOperation(route, components, errorSchema);
  }
  return {
    openapi: "3.1.1",
    info: {
      title: "regkb API",
      version: "1.0.0",
      description: DESCRIPTION,
      license: { name: "Proprietary: licensed to the operator of this server", identifier: "LicenseRef-regkb-proprietary" },
    },
    servers: [{ url: "/", description: `regkb ${VERSION}` }],
    security: [{ bearer: [] }],
    tags: Object.entries(API_TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Organisation API key: rk_live_ followed by 40 base62 characters." } },
      schemas: components.sorted(),
      parameters: { IdempotencyKey: IDEMPOTENCY_KEY_PARAMETER },
      headers: HEADERS,
    },
  };
}

function describeOperation(route: RegisteredRoute, components: SchemaComponents, errorSchema: JsonSchema) {
  const hooks = route.hooks ?? {};
  const {
    hide: _,
    [OPERATION_ERRORS_KEY]: ownErrors,
    [OPERATION_NO_IDEMPOTENCY_HEADER_KEY]: noIdempotencyHeader,
    requestBody: declaredBody,
    ...detail
  } = (hooks.detail ?? {}) as OperationDetail;
  const isPublic = Array.isArray(detail.security) && detail.security.length === 0;
  const isIdempotent = route.method === "POST" && !isPublic && noIdempotencyHeader !== true;
  const parameters: unknown[] = [
    ...objectProperties(hooks.params, components).map(({ name, schema }) => ({ name, in: "path", required: true, schema })),
    ...objectProperties(hooks.query, components).map(({ name, schema, required }) => ({ name, in: "query", required, schema })),
    ...(isIdempotent ? [{ $ref: "#/components/parameters/IdempotencyKey" }] : []),
  ];
  const requestBody = hooks.body
    ? { required: true, content: { "application/json": { schema: components.toJson(hooks.body) } } }
    : declaredBody
      ? { ...declaredBody, content: mapValues(declaredBody.content ?? {}, (media) => ({ ...media, schema: components.toJson(media.schema) })) }
      : undefined;
  // What every operation of this shape can answer; a public operation lists its own.
  const errors = new Set<ApiErrorCode>([...((ownErrors as ApiErrorCode[] | undefined) ?? []), "internal_error", "request_headers_too_large"]);
  if (!isPublic) {
    // Every authenticated request writes (the key's last use, the month's grant), so a full disk can refuse any of them.
    errors.add("unauthorized").add("rate_limited").add("storage_full");
    if (hooks.params) errors.add("not_found");
    if (hooks.query || requestBody || isIdempotent) errors.add("validation_failed");
    if (isIdempotent) errors.add("idempotency_key_reused");
    if (requestBody) errors.add("payload_too_large").add("unsupported_media_type");
  }
  return {
    ...detail,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: { ...successResponses(hooks.response, components, isIdempotent), ...errorResponses(errors, errorSchema) },
  };
}

function successResponses(response: unknown, components: SchemaComponents, isIdempotent: boolean) {
  const byStatus = (typeof response === "object" && response !== null ? response : {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [status, schema] of Object.entries(byStatus)) {
    if (!status.startsWith("2")) continue;
    out[status] = {
      description: SUCCESS_DESCRIPTIONS[status] ?? "Success",
      headers: { "X-Request-Id": headerRef("X-Request-Id"), ...(isIdempotent ? { "Idempotent-Replayed": headerRef("Idempotent-Replayed") } : {}) },
      content: { "application/json": { schema: components.toJson(schema) } },
    };
  }
  return out;
}

/** One response per status, listing each code it can carry, from the one error table. */
function errorResponses(codes: Set<ApiErrorCode>, errorSchema: JsonSchema) {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of API_ERROR_CODES) {
    if (codes.has(code)) byStatus.set(ERRORS[code].status, [...(byStatus.get(ERRORS[code].status) ?? []), code]);
  }
  const out: Record<string, unknown> = {};
  for (const [status, group] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    const specs = group.map((code) => ({ code, ...(ERRORS[code] as ErrorSpec) }));
    const headers: Record<string, unknown> = { "X-Request-Id": headerRef("X-Request-Id") };
    for (const spec of specs) for (const header of spec.headers ?? []) headers[header] = headerRef(header);
    out[String(status)] = {
      description: specs.map((s) => `\`${s.code}\`: ${s.when}.`).join("\n\n"),
      headers,
      content: {
        "application/json": {
          schema: errorSchema,
          examples: Object.fromEntries(specs.map((s) => [s.code, { value: { error: s.code, details: s.example } }])),
        },
      },
    };
  }
  return out;
}

function objectProperties(schema: unknown, components: SchemaComponents): { name: string; schema: JsonSchema; required: boolean }[] {
  const object = schema as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  return Object.entries(object?.properties ?? {}).map(([name, property]) => ({
    name,
    schema: components.toJson(property),
    required: object?.required?.includes(name) ?? false,
  }));
}

function mapValues<T, U>(record: Record<string, T>, map: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}
