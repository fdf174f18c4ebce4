import { listEnabledJurisdictions } from "../../auth/store";
import { documentPagesMax, documentPence, documentPenceMin, documentPencePerPage } from "../../billing/pricing";
import type { Deps } from "../../deps";
import { createDocument, deleteDocument, getDocument, listDocuments, type DocumentView } from "../../documents/service";
import { cleanFilename, MULTIPART_OVERHEAD_BYTES, type Upload } from "../../documents/upload";
import { payloadTooLarge, validationFailed } from "../../errors";
import { isUuid } from "../../ids";
import { authedGet, authedPost, describeError, type DashboardRequest } from "../guard";
import { formatPence, html, time, type SafeHtml } from "../html";
import { csrfField, notice, page } from "../layout";
import { htmlResponse, jsonResponse, redirect } from "../respond";

const STATUS_LABELS: Record<DocumentView["status"], string> = { processing: "Processing", ready: "Ready", failed: "Failed" };
const JURISDICTIONS_PICKED_MAX = 100;

function formatMiB(bytes: number): string {
  return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
}

function render(req: DashboardRequest, top: SafeHtml | string = "", status = 200): Response {
  const { deps, session } = req;
  const documents = listDocuments(deps, session.orgId);
  const jurisdictions = listEnabledJurisdictions(deps.db, session.orgId);
  const names = new Map(jurisdictions.map((j) => [j.slug, j.name]));
  const uploadedId = req.url.searchParams.get("uploaded");
  const uploaded = uploadedId && isUuid(uploadedId) ? getDocument(deps, session.orgId, uploadedId) : null;
  const body = html`
    <h1>Documents</h1>
    <p class="lede">Upload your organisation's policy PDFs and they become part of your searches. Only your organisation can see them.</p>
    ${top}
    ${uploaded ? notice("good", `“${uploaded.filename}” uploaded`,
      `${uploaded.pages} ${uploaded.pages === 1 ? "page" : "pages"}, charged ${formatPence(documentPence(uploaded.pages ?? 1))}. It is searchable once its status is Ready; this page updates by itself.`) : ""}
    ${req.url.searchParams.get("deleted") === "1" ? notice("good", "Document deleted.", "It no longer appears in searches.") : ""}
    <section class="card" aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload a PDF</h2>
      <form class="stack" method="post" action="/documents" enctype="multipart/form-data">
        ${csrfField(session)}
        <div class="field">
          <label for="file">PDF file</label>
          <input id="file" name="file" type="file" accept="application/pdf,.pdf" required aria-describedby="file-help">
          <p class="help" id="file-help">Up to ${documentPagesMax} pages and ${formatMiB(deps.config.maxUploadBytes)}. Costs ${formatPence(documentPencePerPage)} per page, at least ${formatPence(documentPenceMin)}, charged when you upload. The PDF must contain text (scanned images cannot be read); if it cannot be processed you are refunded.</p>
        </div>
        ${jurisdictions.length === 0 ? "" : html`<fieldset aria-describedby="jurisdictions-help">
          <legend>Jurisdictions (optional)</legend>
          <p class="help" id="jurisdictions-help">Tick the jurisdictions this document belongs to. Leave all unticked to include it in every search.</p>
          <div class="checks">${jurisdictions.map((j) => html`<label><input type="checkbox" name="jurisdiction" value="${j.slug}"> ${j.name}</label>`)}</div>
        </fieldset>`}
        <div class="actions"><button class="button" type="submit">Upload</button></div>
      </form>
    </section>
    <section class="card" aria-labelledby="list-heading">
      <h2 id="list-heading">Your documents</h2>
      ${documents.length === 0 ? html`<p class="empty">No documents yet.</p>` : html`<div class="table-wrap"><table class="stack" data-documents-status-url="/documents/status">
        <thead><tr><th scope="col">File</th><th scope="col">Status</th><th scope="col" class="num">Pages</th><th scope="col">Jurisdictions</th><th scope="col">Uploaded</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>${documents.map((d) => html`<tr data-document-id="${d.id}" data-status="${d.status}" data-filename="${d.filename}">
          <td><strong>${d.filename}</strong>${d.error ? html`<br><small>${d.error}</small>` : ""}</td>
          <td><span class="badge ${d.status}" data-status-badge>${STATUS_LABELS[d.status]}</span></td>
          <td class="num" data-label="Pages" data-pages>${d.pages ?? "—"}</td>
          <td data-label="Jurisdictions">${d.jurisdictionSlugs.length === 0 ? "All searches" : d.jurisdictionSlugs.map((s) => names.get(s) ?? s).join(", ")}</td>
          <td data-label="Uploaded">${time(Date.parse(d.createdAt))}</td>
          <td><a class="button small secondary" href="/documents/${d.id}/delete" aria-label="Delete ${d.filename}">Delete</a></td>
        </tr>`)}</tbody>
      </table></div>`}
    </section>`;
  return htmlResponse(page(req.pageContext, "documents", "Documents", body), { status });
}

export function documentsPage(deps: Deps) {
  return authedGet(deps, (req) => render(req));
}

/** What the page's script polls while a document is processing. */
export function documentsStatus(deps: Deps) {
  return authedGet(deps, (req) =>
    jsonResponse({ documents: listDocuments(deps, req.session.orgId).map((d) => ({ id: d.id, status: d.status, pages: d.pages })) }),
  );
}

/** The browser form carries ticked checkboxes rather than the API's JSON field; the rest is POST /v1/documents' service. */
export function documentsUpload(deps: Deps) {
  const maxUploadBytes = deps.config.maxUploadBytes;
  return authedPost(
    deps,
    async (req) => {
      try {
        const file = req.form.get("file");
        if (!(file instanceof File) || file.size === 0) throw validationFailed("Choose a PDF file to upload.");
        if (file.size > maxUploadBytes) throw payloadTooLarge(maxUploadBytes);
        const picked = req.form.getAll("jurisdiction").filter((v): v is string => typeof v === "string").slice(0, JURISDICTIONS_PICKED_MAX);
        const upload: Upload = {
          filename: cleanFilename(file.name),
          bytes: new Uint8Array(await file.arrayBuffer()),
          jurisdictionSlugs: picked.length > 0 ? picked : undefined,
        };
        const created = await createDocument(deps, req.session.orgId, upload);
        return redirect(`/documents?uploaded=${created.id}`);
      } catch (error) {
        const problem = describeError(error);
        return render(req, notice("bad", problem.title, problem.details), problem.status);
      }
    },
    { bodyBytesMax: maxUploadBytes + MULTIPART_OVERHEAD_BYTES },
  );
}

export function documentsDeleteConfirm(deps: Deps) {
  return authedGet(deps, (req) => {
    const id = req.url.pathname.split("/")[2] ?? "";
    const doc = isUuid(id) ? getDocument(deps, req.session.orgId, id) : null;
    if (!doc) return redirect("/documents");
    const body = html`
      <h1>Delete “${doc.filename}”?</h1>
      <p class="lede">It is removed from searches and its file is erased. This cannot be undone, and the upload charge is not refunded.</p>
      <form class="actions" method="post" action="/documents/${doc.id}/delete">
        ${csrfField(req.session)}
        <button class="button danger" type="submit">Delete document</button>
        <a class="button secondary" href="/documents">Keep it</a>
      </form>`;
    return htmlResponse(page(req.pageContext, "documents", "Delete document", body));
  });
}

export function documentsDelete(deps: Deps) {
  return authedPost(deps, async (req) => {
    const id = req.url.pathname.split("/")[2] ?? "";
    const deleted = isUuid(id) && (await deleteDocument(deps, req.session.orgId, id));
    return redirect(deleted ? "/documents?deleted=1" : "/documents");
  });
}
