import type { LedgerEntryType } from "../../billing/ledger";
import type { Deps } from "../../deps";
import { authedGet } from "../guard";
import { html } from "../html";
import { page } from "../layout";
import { LEDGER_TYPES, listLedgerPage } from "../ledger-views";
import { htmlResponse } from "../respond";
import { ledgerTable, TYPE_LABELS } from "./ledger-table";

export const LEDGER_PAGE_SIZE = 50;
/** Deep pages cost an index walk; nobody pages a thousand times by hand. */
const PAGE_NUMBER_MAX = 20_000;

export function ledgerPage(deps: Deps) {
  return authedGet(deps, (req) => {
    const rawType = req.url.searchParams.get("type") ?? "";
    const type = (LEDGER_TYPES as readonly string[]).includes(rawType) ? (rawType as LedgerEntryType) : undefined;
    const rawPage = Number(req.url.searchParams.get("page") ?? "1");
    const pageNumber = Number.isSafeInteger(rawPage) && rawPage >= 1 && rawPage <= PAGE_NUMBER_MAX ? rawPage : 1;
    // One extra row tells whether a next page exists without counting the whole ledger.
    const rows = listLedgerPage(deps.db, req.session.orgId, { type, limit: LEDGER_PAGE_SIZE + 1, offset: (pageNumber - 1) * LEDGER_PAGE_SIZE });
    const entries = rows.slice(0, LEDGER_PAGE_SIZE);
    const link = (p: number) => `/ledger?${new URLSearchParams({ ...(type ? { type } : {}), page: String(p) })}`;
    const body = html`
      <h1>Ledger</h1>
      <p class="lede">Every movement of your credit, newest first. Entries are never edited or removed: a correction is a new entry.
        Amounts show their effect on available credit — a hold takes credit aside while work runs, and is returned when the work is charged.</p>
      <form class="filters" method="get" action="/ledger">
        <div class="field">
          <label for="type">Show</label>
          <select id="type" name="type">
            <option value="">All entries</option>
            ${LEDGER_TYPES.map((t) => html`<option value="${t}"${t === type ? html` selected` : ""}>${TYPE_LABELS[t]} (${t})</option>`)}
          </select>
        </div>
        <button class="button secondary" type="submit">Filter</button>
      </form>
      <section class="card" aria-label="Ledger entries">
        ${entries.length === 0
          ? html`<p class="empty">${pageNumber > 1 ? "No more entries." : type ? "No entries of this type yet." : "No entries yet. Top up to add credit."}</p>`
          : ledgerTable(entries, `Ledger entries, page ${pageNumber}`)}
        <nav class="pager" aria-label="Ledger pages">
          ${pageNumber > 1 ? html`<a class="button secondary small" href="${link(pageNumber - 1)}" rel="prev">← Newer</a>` : html`<span></span>`}
          <span>Page ${pageNumber}</span>
          ${rows.length > LEDGER_PAGE_SIZE ? html`<a class="button secondary small" href="${link(pageNumber + 1)}" rel="next">Older →</a>` : html`<span></span>`}
        </nav>
      </section>`;
    return htmlResponse(page(req.pageContext, "ledger", "Ledger", body));
  });
}
