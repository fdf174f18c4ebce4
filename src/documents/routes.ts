import { Elysia, t } from "elysia";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { notFound } from "../errors";
import { idempotency } from "../http/idempotency";
import { operation } from "../http/operation";
import { Integer, UuidParams } from "../http/schema";
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
    pages: t.Union([Integer({ description: "Counted before the upload was charged." }), t.Null()]),
    createdAt: t.String({ format: "date-time" }),
    error: t.Union([t.String(), t.Null()], { description: "Why ingestion failed (status failed); null otherwise." }),
  },
  { title: "Document" },
);

const CreatedSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Literal("processing"),
    filename: t.String(),
    pages: Integer(),
    creditsChargedPence: Integer({ description: "max(10, 2 × pages)." }),
    availablePence: Integer({ description: "Available credit after the charge." }),
  },
  { title: "DocumentCreated" },
);

const DocumentUpload = t.Object(
  {
    file: t.String({ format: "binary", contentMediaType: "application/pdf", description: "The PDF." }),
    jurisdictionSlugs: t.Optional(
      t.String({ description: 'JSON array of slugs enabled for the organisation, e.g. ["eu","us-ny"]. Omitted or []: every search.' }),
    ),
  },
  { title: "DocumentUpload" },
);

export function documentRoutes(deps: Deps) {
  const maxUploadBytes = deps.config.maxUploadBytes;
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
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
        response: { 202: CreatedSchema },
        detail: operation({
          operationId: "uploadDocument",
          summary: "Upload a policy PDF",
          description: `Counts the pages exactly, charges 2p per page (minimum 10p, at most 500 pages), stores the file
and ingests it in the background (status processing → ready, or failed with a full refund). Nothing is charged or
stored for a rejected file: not a PDF, corrupt, truncated, encrypted or without pages, streams that expand past a
quarter of REGKB_PDF_MEMORY_MB or a parse that needs more than it (invalid_pdf), too many pages, bad jurisdictions, a
missing file or malformed jurisdictionSlugs (validation_failed), a file above REGKB_MAX_UPLOAD_BYTES (default 50 MiB),
or a body that is not multipart/form-data. Once REGKB_DOCUMENT_FAILURES_PER_HOUR (default 10) uploads of the
organisation failed on their content in the last hour (refused by the parser, or failed ingestion because the PDF
could not be read), further uploads get 429 rate_limited with Retry-After. A PDF without any text layer (a scan) fails
ingestion and is refunded: there is no OCR; it does not count towards that limit.`,
          tag: "Documents",
          errors: ["invalid_pdf", "too_many_pages", "invalid_jurisdictions", "insufficient_credit"],
          requestBody: { required: true, content: { "multipart/form-data": { schema: DocumentUpload as never } } },
        }),
      },
    )
    .get("/documents", ({ auth }) => ({ documents: listDocuments(deps, auth.orgId) }), {
      response: { 200: t.Object({ documents: t.Array(DocumentSchema) }, { title: "DocumentList" }) },
      detail: operation({
        operationId: "listDocuments",
        summary: "List the organisation's documents",
        description: "Newest first (at most 1000). Free.",
        tag: "Documents",
      }),
    })
    .get(
      "/documents/:id",
      ({ auth, params }) => {
        const document = getDocument(deps, auth.orgId, params.id);
        if (!document) throw notFound("no such document");
        return { document };
      },
      {
        params: UuidParams,
        response: { 200: t.Object({ document: DocumentSchema }, { title: "DocumentEnvelope" }) },
        detail: operation({
          operationId: "getDocument",
          summary: "Read a document",
          description: "An unknown or malformed id, or another organisation's document, is 404 not_found. Free.",
          tag: "Documents",
        }),
      },
    )
    .delete(
      "/documents/:id",
      async ({ auth, params }) => {
        if (!(await deleteDocument(deps, auth.orgId, params.id))) throw notFound("no such document");
        return { deleted: true as const, id: params.id };
      },
      {
        params: UuidParams,
        response: { 200: t.Object({ deleted: t.Literal(true), id: t.String({ format: "uuid" }) }, { title: "DocumentDeleted" }) },
        detail: operation({
          operationId: "deleteDocument",
          summary: "Delete a document",
          description:
            "Removes its passages from search, its file and its row. Stops an ingestion still running. No refund. A second delete is 404.",
          tag: "Documents",
        }),
      },
    );
}
