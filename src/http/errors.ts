import { t } from "elysia";
import { STORAGE_FULL_RETRY_AFTER_SECONDS } from "../db/storage";

/** The Error body of interface.md §7: a stable snake_case code and a human sentence. */
export const ErrorBody = t.Object(
  {
    error: t.String({ description: "Stable snake_case code (see the README's error table)." }),
    details: t.Optional(t.String({ description: "Human-readable explanation." })),
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

export const storageFull = () =>
  new ApiError(503, "storage_full", "the server's disk is full; nothing was charged or stored, try again later", {
    "retry-after": String(STORAGE_FULL_RETRY_AFTER_SECONDS),
  });

/** Error responses every authenticated route can give, for the OpenAPI document. */
export const commonErrors = {
  400: ErrorBody,
  401: ErrorBody,
  429: ErrorBody,
  500: ErrorBody,
  503: ErrorBody,
} as const;
