import { t } from "elysia";
import { STORAGE_FULL_RETRY_AFTER_SECONDS } from "../db/storage";

/** Response headers the error table refers to; the OpenAPI document describes each once. */
export type ErrorHeader = "WWW-Authenticate" | "Retry-After";

export interface ErrorSpec {
  status: number;
  /** When the server answers with this code (the README's error table says the same). */
  when: string;
  /** An example `details`. */
  example: string;
  headers?: readonly ErrorHeader[];
}

/**
 * Every `error` code the API can answer with: the one table the error handler, the OpenAPI
 * document's error responses and the README follow (decisions.md "Errors").
 */
export const ERROR_CODES = {
  validation_failed: {
    status: 400,
    when: "the body, a query parameter or a header fails its schema; `details` names the field first",
    example: "body.topK: must be an integer from 1 to 50",
  },
  invalid_jurisdictions: {
    status: 400,
    when: "a jurisdiction slug is unknown or not enabled for the organisation",
    example: "unknown or not enabled for this organisation: us-tx",
  },
  invalid_pdf: { status: 400, when: "not a PDF, corrupt, encrypted, no pages, or unparseable within the time limit", example: "the file is not a PDF (it does not start with %PDF-)" },
  too_many_pages: { status: 400, when: "the PDF has more than 500 pages", example: "the PDF has 612 pages; the maximum is 500" },
  invalid_signature: {
    status: 400,
    when: "a Stripe webhook whose Stripe-Signature is missing, wrong or older than 300 seconds",
    example: "Stripe-Signature does not match the body and webhook secret, or is older than 300 seconds",
  },
  unauthorized: {
    status: 401,
    when: "the Authorization header is missing or malformed, or the key is unknown or revoked; checked before anything else",
    example: "unknown or revoked API key",
    headers: ["WWW-Authenticate"],
  },
  insufficient_credit: {
    status: 402,
    when: "available credit (balance − holds) cannot cover the price; nothing ran and nothing was charged",
    example: "available 1 pence, required 2 pence",
  },
  not_found: {
    status: 404,
    when: "an unknown or malformed id, another organisation's resource, or an unknown route",
    example: "execution 0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e does not exist",
  },
  idempotency_key_reused: {
    status: 409,
    when: "the Idempotency-Key was used with another request, or the first request with it is still in flight (then with Retry-After)",
    example: "this Idempotency-Key was used with a different request; use a new key",
    headers: ["Retry-After"],
  },
  payload_too_large: {
    status: 413,
    when: "a JSON body over 1 MiB, or an upload over REGKB_MAX_UPLOAD_BYTES (default 50 MiB)",
    example: "request body is 2097152 bytes; the limit is 1048576 bytes",
  },
  unsupported_media_type: {
    status: 415,
    when: "the Content-Type is not the one the route takes: application/json, or multipart/form-data for POST /v1/documents",
    example: "POST /v1/search takes Content-Type: application/json (got application/x-www-form-urlencoded)",
  },
  rate_limited: {
    status: 429,
    when: "the key's per-minute limit (REGKB_RATE_LIMIT_PER_MINUTE) is used up",
    example: "more than 600 requests per minute for this key",
    headers: ["Retry-After"],
  },
  request_headers_too_large: {
    status: 431,
    when: "the request's headers add up to more than 16 KiB",
    example: "request headers are 20480 bytes; the limit is 16384 bytes",
  },
  internal_error: {
    status: 500,
    when: "an unexpected fault; `details` gives the request id to quote (no stack traces or SQL)",
    example: "request 0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e failed; see the server log",
  },
  payments_unavailable: {
    status: 503,
    when: "POST /v1/top-ups, or the Stripe webhook, on a server with no payment provider configured",
    example: "no payment provider is configured; an operator can credit the account instead",
  },
  sandbox_unavailable: {
    status: 503,
    when: "POST /v1/executions on a host that cannot provide the sandbox's isolation",
    example: "unprivileged user namespaces are disabled on this host",
  },
  storage_full: {
    status: 503,
    when: `the data directory's disk is full; nothing was charged or stored (retry after ${STORAGE_FULL_RETRY_AFTER_SECONDS} seconds)`,
    example: "the server's disk is full; nothing was charged or stored, try again later",
    headers: ["Retry-After"],
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERROR_CODES;
export const ERROR_CODE_NAMES = Object.keys(ERROR_CODES) as ErrorCode[];

/** The Error body of interface.md §7: a stable snake_case code and a human sentence. */
export const ErrorBody = t.Object(
  {
    error: t.Union(
      ERROR_CODE_NAMES.map((code) => t.Literal(code)),
      { description: "Stable snake_case code: what happened, for programs (the README's error table lists them)." },
    ),
    details: t.Optional(t.String({ description: "What happened, for people: names the field, the amounts or the request id." })),
  },
  { title: "Error" },
);

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly details?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(details ? `${code}: ${details}` : code);
  }

  body(): { error: string; details?: string } {
    return this.details === undefined ? { error: this.code } : { error: this.code, details: this.details };
  }
}

export const notFound = (details = "no such resource") => new ApiError(404, "not_found", details);
export const validationFailed = (details: string) => new ApiError(400, "validation_failed", details);
export const unauthorized = (details?: string) =>
  new ApiError(401, "unauthorized", details, { "www-authenticate": 'Bearer realm="regkb"' });
export const insufficientCredit = (availablePence: number, requiredPence: number) =>
  new ApiError(402, "insufficient_credit", `available ${availablePence} pence, required ${requiredPence} pence`);
export const unsupportedMediaType = (details: string) => new ApiError(415, "unsupported_media_type", details);
export const storageFull = () =>
  new ApiError(503, "storage_full", "the server's disk is full; nothing was charged or stored, try again later", {
    "retry-after": String(STORAGE_FULL_RETRY_AFTER_SECONDS),
  });
