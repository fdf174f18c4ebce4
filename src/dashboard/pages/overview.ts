import { getBalance } from "../../billing/ledger";
import { listEntries } from "../../billing/store";
import { listApiKeys } from "../../auth/store";
import type { Deps } from "../../deps";
import { listDocuments } from "../../documents/service";
import { dailySpendChart, type DaySpend } from "../chart";
import { authedGet } from "../guard";
import { formatPence, html } from "../html";
import { notice, page } from "../layout";
import { DAY_MS, spendByDay, spendSince } from "../ledger-views";
import { htmlResponse } from "../respond";
import { ledgerTable } from "./ledger-table";

const CHART_DAYS = 30;
const RECENT_ENTRIES = 5;

function monthStartMs(nowMs: number): number {
  const now = new Date(nowMs);
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
}

export function overviewPage(deps: Deps) {
  return authedGet(deps, (req) => {
    const orgId = req.session.orgId;
    const nowMs = deps.clock.nowMs();
    const balance = getBalance(deps.db, orgId);
    const monthSpendPence = spendSince(deps.db, orgId, monthStartMs(nowMs));
    const todayStartMs = Math.floor(nowMs / DAY_MS) * DAY_MS;
    const firstDayMs = todayStartMs - (CHART_DAYS - 1) * DAY_MS;
    const byDay = spendByDay(deps.db, orgId, firstDayMs);
    const days: DaySpend[] = Array.from({ length: CHART_DAYS }, (_, i) => {
      const dayStartMs = firstDayMs + i * DAY_MS;
      return { dayStartMs, spendPence: Math.max(0, byDay.get(dayStartMs) ?? 0) };
    });
    const periodSpendPence = days.reduce((sum, d) => sum + d.spendPence, 0);
    const busiest = days.reduce((best, d) => (d.spendPence > best.spendPence ? d : best), days[0]!);
    const recent = listEntries(deps.db, orgId, RECENT_ENTRIES, 0);
    const hasKey = listApiKeys(deps.db, orgId).some((k) => k.revokedAtMs === null);
    const hasDocument = listDocuments(deps, orgId).length > 0;
    const steps = [
      { done: balance.balancePence > 0, text: html`<a href="/top-up">Add credit</a> — every search, upload and run is paid from it.` },
      { done: hasKey, text: html`<a href="/keys">Create an API key</a> for your programs.` },
      { done: hasDocument, text: html`<a href="/documents">Upload a policy PDF</a> so searches include it.` },
    ];
    const monthName = new Date(nowMs).toLocaleDateString("en-GB", { month: "long", year: "numeric", timeZone: "UTC" });
    const body = html`
      <h1>Overview</h1>
      <p class="lede">Your organisation's credit and spending. Amounts are in pounds sterling.</p>
      ${req.url.searchParams.get("welcome") === "1" ? notice("good", "Password saved. Welcome to regkb!") : ""}
      <dl class="stats">
        <div class="stat"><dt>Available</dt><dd data-stat="available">${formatPence(balance.availablePence)}<span class="hint">what you can spend now</span></dd></div>
        <div class="stat"><dt>Balance</dt><dd data-stat="balance">${formatPence(balance.balancePence)}<span class="hint">credit in your account</span></dd></div>
        <div class="stat"><dt>Held</dt><dd data-stat="held">${formatPence(balance.heldPence)}<span class="hint">set aside for work in progress</span></dd></div>
        <div class="stat"><dt>Spent in ${monthName}</dt><dd data-stat="month-spend">${formatPence(monthSpendPence)}<span class="hint">charges less refunds</span></dd></div>
      </dl>
      ${steps.every((s) => s.done) ? "" : html`<section class="card" aria-labelledby="start-heading">
        <h2 id="start-heading">Getting started</h2>
        <ol class="steps">${steps.map((s) => html`<li${s.done ? html` class="done"` : ""}>${s.done ? html`<span class="sr-only">Done: </span>` : ""}${s.text}</li>`)}
          <li><a href="/search">Try a search</a> to see results with citations, and what each costs.</li></ol>
      </section>`}
      <section class="card chart" aria-labelledby="chart-heading">
        <h2 id="chart-heading">Daily spend, last ${CHART_DAYS} days</h2>
        <p id="chart-summary" class="help">${periodSpendPence === 0
          ? "Nothing spent in the last 30 days."
          : `${formatPence(periodSpendPence)} in the last ${CHART_DAYS} days; the most in one day was ${formatPence(busiest.spendPence)} on ${new Date(busiest.dayStartMs).toLocaleDateString("en-GB", { day: "numeric", month: "long", timeZone: "UTC" })}.`}</p>
        <div class="chart-scroll">${dailySpendChart(days, "chart-summary")}</div>
        <details>
          <summary>Show the figures as a table</summary>
          <div class="table-wrap"><table>
            <thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Spend</th></tr></thead>
            <tbody>${days.filter((d) => d.spendPence > 0).map((d) => html`<tr><td>${new Date(d.dayStartMs).toISOString().slice(0, 10)}</td><td class="num">${formatPence(d.spendPence)}</td></tr>`)}</tbody>
          </table></div>
        </details>
      </section>
      <section class="card" aria-labelledby="recent-heading">
        <h2 id="recent-heading">Recent activity</h2>
        ${recent.length === 0 ? html`<p class="empty">No activity yet.</p>` : ledgerTable(recent, "Most recent ledger entries")}
        <p><a href="/ledger">See the whole ledger →</a></p>
      </section>`;
    return htmlResponse(page(req.pageContext, "overview", "Overview", body));
  });
}
