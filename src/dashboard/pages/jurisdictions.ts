import { listEnabledJurisdictions } from "../../auth/store";
import type { Deps } from "../../deps";
import { authedGet } from "../guard";
import { html } from "../html";
import { page } from "../layout";
import { htmlResponse } from "../respond";

export function jurisdictionsPage(deps: Deps) {
  return authedGet(deps, (req) => {
    const jurisdictions = listEnabledJurisdictions(deps.db, req.session.orgId);
    const body = html`
      <h1>Jurisdictions</h1>
      <p class="lede">Searches and screenings cover the jurisdictions enabled for your organisation. Your administrator decides which these are.</p>
      <section class="card" aria-labelledby="enabled-heading">
        <h2 id="enabled-heading">Enabled for your organisation (${jurisdictions.length})</h2>
        ${jurisdictions.length === 0
          ? html`<p class="empty">No jurisdictions are enabled yet, so searches have nothing to look in. Ask your administrator to enable some.</p>`
          : html`<div class="table-wrap"><table>
            <thead><tr><th scope="col">Name</th><th scope="col">Slug (for the API)</th><th scope="col">Description</th></tr></thead>
            <tbody>${jurisdictions.map((j) => html`<tr><td>${j.name}</td><td><code>${j.slug}</code></td><td>${j.description}</td></tr>`)}</tbody>
          </table></div>`}
      </section>`;
    return htmlResponse(page(req.pageContext, "jurisdictions", "Jurisdictions", body));
  });
}
