import type { DocumentDecoration } from "elysia";
import type { ApiErrorCode } from "../errors";

export const API_TAGS = {
  "Knowledge base": "Hybrid search of the regulatory corpus and the organisation's own documents, and the jurisdictions it covers.",
  Screenings: "Many keywords searched at once as a durable background run; poll for the results.",
  Documents: "The organisation's policy PDFs: counted, charged, stored and ingested into its searches.",
  Executions: "Python run in an isolated sandbox as a durable background run; poll for the output.",
  Credits: "The prepaid GBP balance, its immutable ledger and card top-ups.",
  MCP: "The knowledge base as tools and resources for AI assistants (Model Context Protocol), with the same keys, prices and rules.",
} as const;
export type ApiTag = keyof typeof API_TAGS;

/** Where an operation's own error codes travel from its route to the OpenAPI document. */
export const OPERATION_ERRORS_KEY = "x-regkb-errors";
/** Marks a POST that takes no Idempotency-Key header (/mcp: its tools take the key as an argument). */
export const OPERATION_NO_IDEMPOTENCY_HEADER_KEY = "x-regkb-no-idempotency-header";

export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  tag: ApiTag;
  /**
   * The codes this operation answers with beyond those implied by its shape, which the
   * OpenAPI document adds itself (authentication, validation, ids, idempotency, body limits).
   */
  errors?: ApiErrorCode[];
  /** Served without an API key (the Stripe webhook). */
  public?: boolean;
  /** A POST that refuses the Idempotency-Key header (its retries are keyed otherwise). */
  noIdempotencyHeader?: boolean;
  requestBody?: DocumentDecoration["requestBody"];
}

/** A route's `detail`: what the OpenAPI document says about it, and whether it needs a key. */
export function operation(doc: OperationDoc): DocumentDecoration {
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    ...(doc.public ? { security: [] } : {}),
    ...(doc.requestBody ? { requestBody: doc.requestBody } : {}),
    ...(doc.noIdempotencyHeader ? { [OPERATION_NO_IDEMPOTENCY_HEADER_KEY]: true } : {}),
    ...{ [OPERATION_ERRORS_KEY]: doc.errors ?? [] },
  };
}

/** A route outside the API document that needs no key (the document itself, its reference page). */
export const PUBLIC_HIDDEN: DocumentDecoration = { hide: true, security: [] };
