import type { LedgerEntry, LedgerEntryType } from "../../billing/ledger";
import { formatPence, html, time, type SafeHtml } from "../html";

export const TYPE_LABELS: Record<LedgerEntryType, string> = {
  top_up: "Top-up",
  grant: "Monthly allowance",
  reserve: "Hold",
  settle: "Charge",
  release: "Hold returned",
  adjustment: "Adjustment",
};

/** Ledger rows as a table; amounts are signed by their effect on available credit. */
export function ledgerTable(entries: LedgerEntry[], caption: string): SafeHtml {
  return html`<div class="table-wrap"><table class="stack">
    <caption class="sr-only">${caption}</caption>
    <thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col" class="num">Amount</th></tr></thead>
    <tbody>${entries.map((e) => html`<tr data-entry-type="${e.type}">
      <td>${time(e.createdAtMs)}</td>
      <td><span class="badge type">${TYPE_LABELS[e.type]}</span></td>
      <td>${e.description}</td>
      <td class="num ${e.amountPence >= 0 ? "plus" : "minus"}">${e.amountPence > 0 ? "+" : ""}${formatPence(e.amountPence)}</td>
    </tr>`)}</tbody>
  </table></div>`;
}
