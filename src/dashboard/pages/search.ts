import { listEnabledJurisdictions } from "../../auth/store";
import { getBalance } from "../../billing/ledger";
import { searchPence } from "../../billing/pricing";
import type { Deps } from "../../deps";
import { uuidv7 } from "../../ids";
import { performSearch } from "../../search/perform";
import { SEARCH_QUERY_CHARS_MAX, SEARCH_TOP_K_DEFAULT, type SearchMatch } from "../../search/request";
import { authedGet, authedPost, describeError, field, type DashboardRequest } from "../guard";
import { formatPence, html, type SafeHtml } from "../html";
import { csrfField, notice, page } from "../layout";
import { htmlResponse } from "../respond";

const TOP_K_CHOICES = [5, 10, 20, 50];

interface SearchForm {
  query: string;
  jurisdictions: string[];
  topK: number;
}

interface SearchOutcome {
  requestId: string;
  results: SearchMatch[];
  creditsChargedPence: number;
  availablePence: number;
}

function render(req: DashboardRequest, input: SearchForm | null, outcome: SearchOutcome | null, problem?: { title: string; details: string; status: number }): Response {
  const { deps, session } = req;
  const enabled = listEnabledJurisdictions(deps.db, session.orgId);
  const names = new Map(enabled.map((j) => [j.slug, j.name]));
  const picked = new Set(input?.jurisdictions ?? enabled.map((j) => j.slug));
  const topK = input?.topK ?? SEARCH_TOP_K_DEFAULT;
  const available = getBalance(deps.db, session.orgId).availablePence;
  const body = html`
    <h1>Search</h1>
    <p class="lede">Ask in plain words or cite a provision (“Article 33”, “§ 899-aa”). Results come from the regulations of the jurisdictions you pick
      and your own ready documents, best first, each with where it comes from. Each search costs ${formatPence(searchPence)}, the same as through the API;
      you have ${formatPence(available)} available.</p>
    ${problem ? notice("bad", problem.title, problem.details) : ""}
    <section class="card" aria-labelledby="query-heading">
      <h2 id="query-heading" class="sr-only">Query</h2>
      <form class="stack" method="post" action="/search">
        ${csrfField(session)}
        <div class="field">
          <label for="query">Question or citation</label>
          <textarea id="query" name="query" required maxlength="${SEARCH_QUERY_CHARS_MAX}" rows="3" placeholder="e.g. How quickly must a personal data breach be reported?">${input?.query ?? ""}</textarea>
        </div>
        ${enabled.length === 0
          ? notice("warn", "No jurisdictions are enabled for your organisation.", "Searches will only cover your own documents. Ask your administrator to enable jurisdictions.")
          : html`<fieldset>
          <legend>Jurisdictions</legend>
          <div class="checks">${enabled.map((j) => html`<label><input type="checkbox" name="jurisdiction" value="${j.slug}"${picked.has(j.slug) ? html` checked` : ""}> ${j.name}</label>`)}</div>
        </fieldset>`}
        <div class="row">
          <div class="field">
            <label for="topK">Number of results</label>
            <select id="topK" name="topK">${TOP_K_CHOICES.map((k) => html`<option value="${k}"${k === topK ? html` selected` : ""}>${k}</option>`)}</select>
          </div>
          <button class="button" type="submit">Search (${formatPence(searchPence)})</button>
        </div>
      </form>
    </section>
    ${outcome ? results(outcome, names) : ""}`;
  return htmlResponse(page(req.pageContext, "search", "Search", body), { status: problem?.status ?? 200 });
}

function results(outcome: SearchOutcome, names: Map<string, string>): SafeHtml {
  return html`<section aria-labelledby="results-heading">
    <h2 id="results-heading">${outcome.results.length} ${outcome.results.length === 1 ? "result" : "results"}</h2>
    <p class="help" data-search-cost>Charged ${formatPence(outcome.creditsChargedPence)} · ${formatPence(outcome.availablePence)} available · request <code>${outcome.requestId}</code></p>
    ${outcome.results.length === 0 ? html`<p class="empty">Nothing matched. Try other words or more jurisdictions.</p>` : html`<ol class="results">
      ${outcome.results.map((m) => html`<li class="result">
        <p class="cite">${m.citationPath ?? m.source ?? "Passage"}</p>
        <p class="meta">${m.source && m.citationPath ? html`${m.source} · ` : ""}${(m.jurisdictionSlugs ?? []).length === 0 ? "Your document" : (m.jurisdictionSlugs ?? []).map((s) => names.get(s) ?? s).join(", ")} · relevance ${m.score.toFixed(2)}</p>
        <p class="content">${m.content}</p>
      </li>`)}
    </ol>`}
  </section>`;
}

export function searchPage(deps: Deps) {
  return authedGet(deps, (req) => render(req, null, null));
}

/**
 * The same paid search as POST /v1/search (performSearch): charged before any work, so a
 * 402 means nothing ran.
 */
export function searchSubmit(deps: Deps) {
  return authedPost(deps, async (req) => {
    const orgId = req.session.orgId;
    const rawTopK = Number(field(req.form, "topK", 3));
    const input: SearchForm = {
      query: field(req.form, "query", SEARCH_QUERY_CHARS_MAX + 1),
      jurisdictions: req.form.getAll("jurisdiction").filter((v): v is string => typeof v === "string").slice(0, 200),
      topK: TOP_K_CHOICES.includes(rawTopK) ? rawTopK : SEARCH_TOP_K_DEFAULT,
    };
    if (input.query.trim() === "" || input.query.length > SEARCH_QUERY_CHARS_MAX) {
      return render(req, input, null, { title: "Please check the form", details: `Enter a question of 1 to ${SEARCH_QUERY_CHARS_MAX} characters.`, status: 400 });
    }
    const enabledCount = listEnabledJurisdictions(deps.db, orgId).length;
    if (enabledCount > 0 && input.jurisdictions.length === 0) {
      return render(req, input, null, { title: "Pick at least one jurisdiction", details: "Tick the jurisdictions to search in.", status: 400 });
    }
    try {
      const outcome = await performSearch(deps, {
        orgId,
        query: input.query,
        jurisdictions: input.jurisdictions.length > 0 ? input.jurisdictions : undefined,
        topK: input.topK,
        operationId: uuidv7(),
      });
      return render(req, input, outcome);
    } catch (error) {
      return render(req, input, null, describeError(error));
    }
  });
}
