/**
 * A typed client for the regkb API: the types in schema.d.ts are generated from the
 * server's OpenAPI document (`bun scripts/generate-client.ts`), the requests go through
 * openapi-fetch. Every path, parameter, body and response is checked by the compiler.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema";

export type { components, operations, paths } from "./schema";

type Schemas = components["schemas"];
export type ApiError = Schemas["Error"];
export type ErrorCode = ApiError["error"];
export type SearchMatch = Schemas["SearchMatch"];
export type Jurisdiction = Schemas["Jurisdiction"];
export type CreditBalance = Schemas["CreditBalance"];
export type LedgerEntry = Schemas["LedgerEntry"];
export type ScreeningRun = Schemas["ScreeningRun"];
export type RegkbDocument = Schemas["Document"];
export type ExecutionRun = Schemas["ExecutionRun"];
export type RegkbClient = Client<paths, "application/json">;

export interface RegkbClientOptions {
  /** Where the server answers, e.g. "https://regkb.example.internal" (without /v1). */
  baseUrl: string;
  /** An organisation API key, rk_live_…. */
  apiKey: string;
  /** A fetch to use instead of the global one (proxies, tests). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createRegkbClient(options: RegkbClientOptions): RegkbClient {
  const client = createClient<paths, "application/json">({ baseUrl: options.baseUrl.replace(/\/+$/, ""), fetch: options.fetch });
  client.use({
    onRequest({ request }) {
      request.headers.set("Authorization", `Bearer ${options.apiKey}`);
      return request;
    },
  });
  return client;
}

export interface DocumentUpload {
  file: Blob;
  filename: string;
  /** Jurisdictions the document applies to; omitted: every search of the organisation. */
  jurisdictionSlugs?: string[];
  idempotencyKey?: string;
}

/** POST /v1/documents as multipart/form-data (the generated body type cannot carry a Blob). */
export function uploadDocument(client: RegkbClient, upload: DocumentUpload) {
  const form = new FormData();
  form.append("file", upload.file, upload.filename);
  if (upload.jurisdictionSlugs) form.append("jurisdictionSlugs", JSON.stringify(upload.jurisdictionSlugs));
  return client.POST("/v1/documents", {
    params: { header: upload.idempotencyKey === undefined ? {} : { "Idempotency-Key": upload.idempotencyKey } },
    body: { file: upload.filename },
    bodySerializer: () => form,
  });
}
