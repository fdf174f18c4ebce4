import { createApiKey, NAME_LENGTH_MAX, revokeApiKey } from "../../auth/service";
import { listApiKeys } from "../../auth/store";
import type { Deps } from "../../deps";
import { isUuid } from "../../ids";
import { authedGet, authedPost, describeError, field, type DashboardRequest } from "../guard";
import { html, time, type SafeHtml } from "../html";
import { csrfField, notice, page } from "../layout";
import { htmlResponse, redirect } from "../respond";
import type { OneTimeReveal } from "../reveal";

function render(req: DashboardRequest, top: SafeHtml | string = "", status = 200): Response {
  const keys = listApiKeys(req.deps.db, req.session.orgId);
  const active = keys.filter((k) => k.revokedAtMs === null);
  const revoked = keys.filter((k) => k.revokedAtMs !== null);
  const revokedNotice = req.url.searchParams.get("revoked") === "1" ? notice("good", "Key revoked.", "Programs using it get 401 unauthorized from now on.") : "";
  const body = html`
    <h1>API keys</h1>
    <p class="lede">Programs use an API key to call the regkb API: send it as <code>Authorization: Bearer rk_live_…</code>.
      Anyone with a key can spend your organisation's credit, so keep keys secret and revoke any you no longer need.</p>
    ${top}${revokedNotice}
    <section class="card" aria-labelledby="create-heading">
      <h2 id="create-heading">Create a key</h2>
      <form class="row" method="post" action="/keys">
        ${csrfField(req.session)}
        <div class="field">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" type="text" required maxlength="${NAME_LENGTH_MAX}" placeholder="e.g. production server" aria-describedby="key-name-help">
        </div>
        <button class="button" type="submit">Create key</button>
      </form>
      <p class="help" id="key-name-help">A name helps you recognise the key later. The key itself is shown once, right after you create it.</p>
    </section>
    <section class="card" aria-labelledby="active-heading">
      <h2 id="active-heading">Active keys</h2>
      ${active.length === 0
        ? html`<p class="empty">No active keys yet.</p>`
        : html`<div class="table-wrap"><table class="stack">
          <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>${active.map((k) => html`<tr data-key-id="${k.id}">
            <td><strong>${k.name}</strong></td><td data-label="Key"><code>${k.displayPrefix}</code></td><td data-label="Created">${time(k.createdAtMs)}</td>
            <td data-label="Last used">${k.lastUsedAtMs === null ? "Never" : time(k.lastUsedAtMs)}</td>
            <td><a class="button small danger" href="/keys/${k.id}/revoke" aria-label="Revoke key ${k.name}">Revoke</a></td>
          </tr>`)}</tbody></table></div>`}
    </section>
    ${revoked.length === 0 ? "" : html`<section class="card" aria-labelledby="revoked-heading">
      <h2 id="revoked-heading">Revoked keys</h2>
      <div class="table-wrap"><table class="stack">
        <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Last used</th><th scope="col">Revoked</th></tr></thead>
        <tbody>${revoked.map((k) => html`<tr><td><strong>${k.name}</strong></td><td data-label="Key"><code>${k.displayPrefix}</code></td>
          <td data-label="Last used">${k.lastUsedAtMs === null ? "Never" : time(k.lastUsedAtMs)}</td><td><span class="badge revoked">Revoked</span> ${time(k.revokedAtMs!)}</td></tr>`)}</tbody>
      </table></div></section>`}`;
  return htmlResponse(page(req.pageContext, "keys", "API keys", body), { status });
}

export function keysPage(deps: Deps, reveal: OneTimeReveal) {
  return authedGet(deps, (req) => {
    const createdId = req.url.searchParams.get("created");
    if (!createdId) return render(req);
    const created = reveal.take(req.session.tokenHash, createdId, deps.clock.nowMs());
    if (!created) {
      return render(req, notice("warn", "That key can no longer be shown.", "Keys are shown once. If you did not copy it, revoke it below and create another."));
    }
    const shown = html`<section class="notice good" role="status" aria-labelledby="new-key-heading">
      <strong id="new-key-heading">Key “${created.name}” created. Copy it now: it will not be shown again.</strong>
      <div class="secret"><code id="new-key">${created.key}</code>
        <button class="button secondary" type="button" data-copy="#new-key" hidden>Copy</button></div>
      <p>Try it: <code>curl -H "Authorization: Bearer ${created.key}" ${deps.config.publicUrl}/v1/credits</code></p>
    </section>`;
    return render(req, shown);
  });
}

/** The key is never stored: it waits in memory for the one page view that shows it. */
export function keysCreate(deps: Deps, reveal: OneTimeReveal) {
  return authedPost(deps, (req) => {
    try {
      const created = createApiKey(deps, { orgId: req.session.orgId, name: field(req.form, "name", NAME_LENGTH_MAX + 1) });
      reveal.put(req.session.tokenHash, created, deps.clock.nowMs());
      return redirect(`/keys?created=${created.id}`);
    } catch (error) {
      const problem = describeError(error);
      return render(req, notice("bad", problem.title, problem.details), problem.status);
    }
  });
}

function findOwnKey(req: DashboardRequest, id: string) {
  if (!isUuid(id)) return undefined;
  return listApiKeys(req.deps.db, req.session.orgId).find((k) => k.id === id && k.revokedAtMs === null);
}

/** Revoking is final, so it is confirmed on its own page (works without JavaScript, reachable by keyboard). */
export function keysRevokeConfirm(deps: Deps) {
  return authedGet(deps, (req) => {
    const id = req.url.pathname.split("/")[2] ?? "";
    const key = findOwnKey(req, id);
    if (!key) return redirect("/keys");
    const body = html`
      <h1>Revoke key “${key.name}”?</h1>
      <p class="lede">Programs using <code>${key.displayPrefix}</code> will stop working at once. This cannot be undone.</p>
      <form class="actions" method="post" action="/keys/${key.id}/revoke">
        ${csrfField(req.session)}
        <button class="button danger" type="submit">Revoke key</button>
        <a class="button secondary" href="/keys">Keep it</a>
      </form>`;
    return htmlResponse(page(req.pageContext, "keys", "Revoke key", body));
  });
}

export function keysRevoke(deps: Deps) {
  return authedPost(deps, (req) => {
    const id = req.url.pathname.split("/")[2] ?? "";
    if (!findOwnKey(req, id)) return redirect("/keys");
    revokeApiKey(deps, id, req.session.orgId);
    return redirect("/keys?revoked=1");
  });
}
