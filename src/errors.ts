import { STORAGE_FULL_RETRY_AFTER_SECONDS } from "./db/storage";

/** Response headers the error table refers to; the OpenAPI document describes each once. */
export type ErrorHeader = "WWW-Authenticate" | "Retry-After";

export interface ErrorSpec {
  /** The HTTP status the API answers with, and the status of the dashboard page that shows it. */
  status: number;
  /** A short headline for people (the dashboard shows it above `details`). */
  title: string;
  /** When it is raised (the README's error table says the same). */
  when: string;
  /** An example `details`. */
  example: string;
  headers?: readonly ErrorHeader[];
  /** Raised only by the dashboard or the command line: never an API answer, so not in the OpenAPI document. */
  operatorOnly?: true;
}

/**
 * Every error code the product refuses with, and what it means: the one table the HTTP error
 * handler, the MCP tool errors, the OpenAPI document's error responses, the dashboard's
 * headlines and the README follow (decisions.md "Errors").
 */
export const ERRORS = {
  validation_failed: {
    status: 400,
    title: "Please check the form",
    when: "the body, a query parameter or a header fails its schema; `details` names the field first",
    example: "body.topK: must be an integer from 1 to 50",
  },
  invalid_jurisdictions: {
    status: 400,
    title: "Unknown jurisdiction",
    when: "a jurisdiction slug is unknown or not enabled for the organisation",
    example: "unknown or not enabled for this organisation: us-tx",
  },
  invalid_pdf: {
    status: 400,
    title: "That file is not a usable PDF",
    when: "not a PDF, corrupt, encrypted, no pages, or unparseable within the time limit",
    example: "the file is not a PDF (it does not start with %PDF-)",
  },
  too_many_pages: {
    status: 400,
    title: "Too many pages",
    when: "the PDF has more than 500 pages",
    example: "the PDF has 612 pages; the maximum is 500",
  },
  invalid_signature: {
    status: 400,
    title: "Invalid webhook signature",
    when: "a Stripe webhook whose Stripe-Signature is missing, wrong or older than 300 seconds",
    example: "Stripe-Signature does not match the body and webhook secret, or is older than 300 seconds",
  },
  unauthorized: {
    status: 401,
    title: "Invalid API key",
    when: "the Authorization header is missing or malformed, or the key is unknown or revoked; checked before anything else",
    example: "unknown or revoked API key",
    headers: ["WWW-Authenticate"],
  },
  insufficient_credit: {
    status: 402,
    title: "Not enough credit",
    when: "available credit (balance − holds) cannot cover the price; nothing ran and nothing was charged",
    example: "available 1 pence, required 2 pence",
  },
  not_found: {
    status: 404,
    title: "Not found",
    when: "an unknown or malformed id, another organisation's resource, or an unknown route",
    example: "execution 0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e does not exist",
  },
  idempotency_key_reused: {
    status: 409,
    title: "Idempotency-Key already used",
    when: "the Idempotency-Key was used with another request, or the first request with it is still in flight (then with Retry-After)",
    example: "this Idempotency-Key was used with a different request; use a new key",
    headers: ["Retry-After"],
  },
  payload_too_large: {
    status: 413,
    title: "File too large",
    when: "a JSON body over 1 MiB, or an upload over REGKB_MAX_UPLOAD_BYTES (default 50 MiB)",
    example: "request body is 2097152 bytes; the limit is 1048576 bytes",
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported content type",
    when: "the Content-Type is not the one the route takes: application/json, or multipart/form-data for POST /v1/documents",
    example: "POST /v1/search takes Content-Type: application/json (got application/x-www-form-urlencoded)",
  },
  rate_limited: {
    status: 429,
    title: "Slow down",
    when: "the key's per-minute limit (REGKB_RATE_LIMIT_PER_MINUTE) is used up",
    example: "more than 600 requests per minute for this key",
    headers: ["Retry-After"],
  },
  request_headers_too_large: {
    status: 431,
    title: "Request headers too large",
    when: "the request's headers add up to more than 16 KiB",
    example: "request headers are 20480 bytes; the limit is 16384 bytes",
  },
  internal_error: {
    status: 500,
    title: "Something went wrong",
    when: "an unexpected fault; `details` gives the request id to quote (no stack traces or SQL)",
    example: "request 0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e failed; see the server log",
  },
  payments_unavailable: {
    status: 503,
    title: "Payments are not configured",
    when: "POST /v1/top-ups, or the Stripe webhook, on a server with no payment provider configured",
    example: "no payment provider is configured; an operator can credit the account instead",
  },
  sandbox_unavailable: {
    status: 503,
    title: "Code execution is unavailable",
    when: "POST /v1/executions on a host that cannot provide the sandbox's isolation",
    example: "unprivileged user namespaces are disabled on this host",
  },
  storage_full: {
    status: 503,
    title: "The server's disk is full",
    when: `the data directory's disk is full; nothing was charged or stored (retry after ${STORAGE_FULL_RETRY_AFTER_SECONDS} seconds)`,
    example: "the server's disk is full; nothing was charged or stored, try again later",
    headers: ["Retry-After"],
  },
  invalid_credentials: {
    status: 401,
    title: "Sign-in failed",
    when: "a dashboard sign-in whose email and password do not match an account",
    example: "that email and password do not match an account",
    operatorOnly: true,
  },
  current_password_incorrect: {
    status: 400,
    title: "Current password not accepted",
    when: "a dashboard password change whose current password is wrong",
    example: "the current password is not correct",
    operatorOnly: true,
  },
  user_exists: {
    status: 409,
    title: "User already exists",
    when: "creating a dashboard user whose email already has an account",
    example: "a user with email ops@example.com already exists",
    operatorOnly: true,
  },
  invalid_arguments: {
    status: 400,
    title: "Invalid arguments",
    when: "a command line call with an unknown command, a missing or malformed flag, or an invalid setting",
    example: "--org is required",
    operatorOnly: true,
  },
  data_dir_in_use: {
    status: 409,
    title: "Data directory in use",
    when: "`regkb serve` or `regkb migrate-to-postgres` on a data directory another regkb process is serving or copying",
    example: "/var/lib/regkb is in use by another regkb process (a running `regkb serve` or `regkb migrate-to-postgres`): stop it first",
    operatorOnly: true,
  },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof ERRORS;
/** The codes the API answers with (interface.md's Error body); the rest are the dashboard's and the command line's. */
export type ApiErrorCode = { [C in ErrorCode]: (typeof ERRORS)[C] extends { operatorOnly: true } ? never : C }[ErrorCode];

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];
export const API_ERROR_CODES = ERROR_CODES.filter((code) => !("operatorOnly" in ERRORS[code])) as ApiErrorCode[];

/**
 * A refusal: the request cannot be served as asked, for a reason the table names. Services
 * and cores throw it; each edge (HTTP, MCP, dashboard, command line) shows it its own way.
 * `headers` are the few that go with it (Retry-After, WWW-Authenticate), lower-case.
 */
export class Refusal extends Error {
  override name = "Refusal";
  /** From the table: a code has one status wherever it is raised. */
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly details: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(`${code}: ${details}`);
    this.status = ERRORS[code].status;
  }

  get title(): string {
    return ERRORS[this.code].title;
  }

  /** The Error body (interface.md §7). */
  body(): { error: ErrorCode; details: string } {
    return { error: this.code, details: this.details };
  }
}

export const validationFailed = (details: string) => new Refusal("validation_failed", details);
export const notFound = (details = "no such resource") => new Refusal("not_found", details);
export const unauthorized = (details: string) => new Refusal("unauthorized", details, { "www-authenticate": 'Bearer realm="regkb"' });
export const insufficientCredit = (availablePence: number, requiredPence: number) =>
  new Refusal("insufficient_credit", `available ${availablePence} pence, required ${requiredPence} pence`);
export const invalidJurisdictions = (details: string) => new Refusal("invalid_jurisdictions", details);
export const unsupportedMediaType = (details: string) => new Refusal("unsupported_media_type", details);
export const rateLimited = (details: string, retryAfterSeconds: number) =>
  new Refusal("rate_limited", details, { "retry-after": String(retryAfterSeconds) });

/**
 * 413, the one wording for every body limit: the size when it is known (a declared
 * Content-Length, a webhook's bytes), otherwise the limit alone (an upload cut off while counted).
 */
export function payloadTooLarge(limitBytes: number, bodyBytes?: number, headers: Record<string, string> = {}): Refusal {
  const details = bodyBytes === undefined ? `the upload limit is ${limitBytes} bytes` : `request body is ${bodyBytes} bytes; the limit is ${limitBytes} bytes`;
  return new Refusal("payload_too_large", details, headers);
}

export const storageFull = () =>
  new Refusal("storage_full", "the server's disk is full; nothing was charged or stored, try again later", {
    "retry-after": String(STORAGE_FULL_RETRY_AFTER_SECONDS),
  });
export const internalError = (requestId: string) => new Refusal("internal_error", `request ${requestId} failed; see the server log`);
