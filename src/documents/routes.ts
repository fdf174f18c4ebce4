import { Elysia, t } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { commonErrors, ErrorBody, notFound } from "../http/errors";
import { IDEMPOTENCY_KEY_PARAMETER, idempotency } from "../http/idempotency";
import { isUuid } from "../ids";
import { documentIngestSpec } from "./ingest";
import { createDocument, deleteDocument, getDocument, listDocuments } from "./service";
import { readMultipart, uploadFromForm } from "./upload";

export const DocumentSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    filename: t.String(),
    status: t.Union([t.Literal("processing"), t.Literal("ready"), t.Literal("failed")]),
    jurisdictionSlugs: t.Array(t.String(), {
      description: "Empty: the document applies to every search of the organisation.",
    }),
    pages: t.Union([t.Integer(), t.Null()]),
    createdAt: t.String({ format: "date-time" }),
    error: t.Union([t.String(), t.Null()], { description: "Why ingestion failed (status failed); null otherwise." }),
  },
  { title: "Document" },
);

const CreatedSchema = t.Object({
  id: t.String({ format: "uuid" }),
  status: t.String({ examples: ["processing"] }),
  filename: t.String(),
  pages: t.Integer(),
  creditsChargedPence: t.Integer(),
  availablePence: t.Integer(),
});

const IdParams = t.Object({ id: t.String() });

export function documentRoutes(deps: Deps) {
  deps.jobs.register(documentIngestSpec(deps));
  const maxUploadBytes = deps.config.maxUploadBytes;
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey(deps))
    // After authentication (an anonymous client is refused before a byte is read) and before
    // idempotency, which hashes the body, file content included, to tell retries from reuse.
    .onBeforeHandle(async (ctx) => {
      if (ctx.request.method !== "POST") return;
      (ctx as { body: unknown }).body = await readMultipart(ctx.request, maxUploadBytes);
    })
    .use(idempotency(deps))
    .post(
      "/documents",
      async ({ auth, body, operationId, set }) => {
        const upload = await uploadFromForm(body as FormData, maxUploadBytes);
        set.status = 202;
        return createDocument(deps, auth.orgId, upload, operationId);
      },
      {
        // The body is read by readMultipart as a counted stream; Elysia must not buffer it first.
        parse: "none",
        response: { 202: CreatedSchema, 402: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, ...commonErrors },
        detail: {
          parameters: [IDEMPOTENCY_KEY_PARAMETER],
          summary: "Upload a policy PDF",
          description: `Counts the pages exactly, charges 2p per page (minimum 10p, at most 500 pages), stores the file
and ingests it in the background (status processing → ready, or failed with a full refund). Nothing is charged or
stored for a rejected file. Errors: 400 invalid_pdf (not a PDF, corrupt, truncated, encrypted, no pages, streams that
expand past a quarter of REGKB_PDF_MEMORY_MB, or a parse that needs more than it), 400 too_many_pages,
400 invalid_jurisdictions, 400 validation_failed (missing file, malformed jurisdictionSlugs), 402 insufficient_credit,
413 payload_too_large (file above REGKB_MAX_UPLOAD_BYTES, default 50 MiB), 415 unsupported_media_type (not
multipart/form-data), 409 idempotency_key_reused, 429 rate_limited (with Retry-After) once REGKB_DOCUMENT_FAILURES_PER_HOUR
(default 10) uploads of the organisation failed on their content in the last hour: refused by the parser, or failed
ingestion because the PDF could not be read. A PDF without any text layer (a scan) fails ingestion and is refunded: there
is no OCR; it does not count towards that limit.`,
          tags: ["Documents"],
          requestBody: {
            required: true,
            content: {
              "multipart/form-data": {
                schema: {
                  type: "object",
                  required: ["file"],
                  properties: {
                    file: { type: "string", format: "binary", description: "The PDF." },
                    jurisdictionSlugs: {
                      type: "string",
                      description: 'JSON array of slugs enabled for the organisation, e.g. ["eu","us-ny"]. Omitted or []: every search.',
                    },
                  },
                },
              },
            },
          },
        },
      },
    )
    .get("/documents", ({ auth }) => ({ documents: listDocuments(deps, auth.orgId) }), {
      response: { 200: t.Object({ documents: t.Array(DocumentSchema) }), ...commonErrors },
      detail: {
        summary: "List the organisation's documents",
        description: "Newest first (at most 1000). Free.",
        tags: ["Documents"],
      },
    })
    .get(
      "/documents/:id",
      ({ auth, params }) => {
        const document = isUuid(params.id) ? getDocument(deps, auth.orgId, params.id) : null;
        if (!document) throw notFound("no such document");
        return { document };
      },
      {
        params: IdParams,
        response: { 200: t.Object({ document: DocumentSchema }), 404: ErrorBody, ...commonErrors },
        detail: { summary: "Read a document", description: "404 for an unknown id or another organisation's. Free.", tags: ["Documents"] },
      },
    )
    .delete(
      "/documents/:id",
      ({ auth, params }) => {
        if (!isUuid(params.id) || !deleteDocument(deps, auth.orgId, params.id)) throw notFound("no such document");
        return { deleted: true, id: params.id };
      },
      {
        params: IdParams,
        response: { 200: t.Object({ deleted: t.Boolean(), id: t.String({ format: "uuid" }) }), 404: ErrorBody, ...commonErrors },
        detail: {
          summary: "Delete a document",
          description:
            "Removes its passages from search, its file and its row. Stops an ingestion still running. No refund. A second delete is 404.",
          tags: ["Documents"],
        },
      },
    );
}
