import { getBalance } from "../../billing/ledger";
import { findOrder } from "../../billing/store";
import { createTopUp, TOP_UP_PENCE_MAX, TOP_UP_PENCE_MIN } from "../../billing/top-ups";
import type { Deps } from "../../deps";
import { notFound } from "../../errors";
import { isUuid } from "../../ids";
import { authedGet, authedPost, describeError, field, type DashboardRequest } from "../guard";
import { formatPence, html, type SafeHtml } from "../html";
import { csrfField, notice, page } from "../layout";
import { htmlResponse, jsonResponse, redirect } from "../respond";

const PRESETS_POUNDS = [10, 25, 50, 100];
const POUNDS_PATTERN = /^\d{1,7}(\.\d{1,2})?$/;

/** "25" or "25.5" pounds → 2550 pence, exactly (no floating point). */
export function poundsToPence(raw: string): number | null {
  const text = raw.trim().replace(/^£/, "").replace(/,/g, "");
  if (!POUNDS_PATTERN.test(text)) return null;
  const [pounds, fraction = ""] = text.split(".");
  return Number(pounds) * 100 + Number(fraction.padEnd(2, "0"));
}

function orderOf(req: DashboardRequest) {
  const id = req.url.searchParams.get("order") ?? "";
  const order = isUuid(id) ? findOrder(req.deps.db, id) : null;
  return order && order.orgId === req.session.orgId ? order : null;
}

/** Where the hosted checkout sends the customer back: success_url and cancel_url point here. */
function outcomePanel(req: DashboardRequest): SafeHtml | string {
  const outcome = req.url.searchParams.get("outcome");
  if (outcome !== "success" && outcome !== "cancelled") return "";
  const order = orderOf(req);
  if (!order) return notice("warn", "We could not find that payment", "If you paid, the credit will still arrive; check the ledger shortly.");
  if (order.status === "paid") {
    return html`<section class="notice good" role="status" data-outcome="paid"><strong>Payment received: ${formatPence(order.amountPence)} added to your credit.</strong>
      <p>It is in your <a href="/ledger?type=top_up">ledger</a> as a top-up.</p></section>`;
  }
  if (outcome === "cancelled") {
    return html`<section class="notice warn" role="status" data-outcome="cancelled"><strong>Top-up cancelled.</strong>
      <p>Nothing was charged. You can start again below whenever you like.</p></section>`;
  }
  if (order.status === "failed" || order.status === "expired") {
    return html`<section class="notice bad" role="alert" data-outcome="${order.status}"><strong>The payment did not go through.</strong>
      <p>Nothing was added. Try again below, perhaps with another card.</p></section>`;
  }
  return html`<section class="notice good" role="status" data-outcome="waiting" data-order-status-url="/top-up/orders/${order.id}">
    <strong>Thank you — we are waiting for the payment provider to confirm ${formatPence(order.amountPence)}.</strong>
    <p>This usually takes a few seconds and this page updates by itself. You can leave it: the credit arrives either way.</p></section>`;
}

function render(req: DashboardRequest, problem?: { title: string; details: string }, status = 200): Response {
  const { deps } = req;
  const balance = getBalance(deps.db, req.session.orgId);
  const configured = deps.payments.checkoutAvailable();
  const body = html`
    <h1>Top up</h1>
    <p class="lede">Add credit by card. Searches, uploads, screenings and code runs are paid from it; it never expires.
      You have ${formatPence(balance.availablePence)} available now.</p>
    ${outcomePanel(req)}
    ${problem ? notice("bad", problem.title, problem.details) : ""}
    ${configured
      ? html`<section class="card" aria-labelledby="amount-heading">
        <h2 id="amount-heading">How much?</h2>
        <form class="stack" method="post" action="/top-up">
          ${csrfField(req.session)}
          <fieldset>
            <legend>Choose an amount</legend>
            <div class="amounts">${PRESETS_POUNDS.map((p) => html`<button class="button secondary" type="submit" name="preset" value="${p}">£${p}</button>`)}</div>
          </fieldset>
          <div class="row">
            <div class="field">
              <label for="amount">Or another amount in pounds</label>
              <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" placeholder="e.g. 40" aria-describedby="amount-help">
            </div>
            <button class="button" type="submit">Continue to payment</button>
          </div>
          <p class="help" id="amount-help">From ${formatPence(TOP_UP_PENCE_MIN)} to ${formatPence(TOP_UP_PENCE_MAX)} per payment. You pay on a secure page of our payment provider and come back here afterwards.</p>
        </form>
      </section>`
      : html`<section class="notice warn" role="status" data-payments="not-configured">
        <strong>Card payments are not set up on this server.</strong>
        <p>This installation has no payment provider configured, so credit cannot be bought here. Ask your administrator to add credit for you
          (they can run <code>regkb credits top-up</code>), or to configure card payments.</p>
      </section>`}`;
  return htmlResponse(page(req.pageContext, "top-up", "Top up", body), { status, allowOffsiteFormRedirect: true });
}

export function topUpPage(deps: Deps) {
  return authedGet(deps, (req) => render(req));
}

/** The same service as POST /v1/top-ups, then straight on to the hosted checkout. */
export function topUpSubmit(deps: Deps) {
  return authedPost(deps, async (req) => {
    const raw = field(req.form, "preset", 20) || field(req.form, "amount", 20);
    const amountPence = poundsToPence(raw);
    if (amountPence === null || amountPence < TOP_UP_PENCE_MIN || amountPence > TOP_UP_PENCE_MAX) {
      return render(req, {
        title: "Please check the amount",
        details: `Enter an amount in pounds from ${formatPence(TOP_UP_PENCE_MIN)} to ${formatPence(TOP_UP_PENCE_MAX)}, like 40 or 40.50.`,
      }, 400);
    }
    try {
      const checkout = await createTopUp(deps, { orgId: req.session.orgId, amountPence });
      return redirect(checkout.checkoutUrl);
    } catch (error) {
      const problem = describeError(error);
      return render(req, problem, problem.status);
    }
  });
}

/** Polled by the return page until the webhook has settled the order. */
export function topUpOrderStatus(deps: Deps) {
  return authedGet(deps, (req) => {
    const id = req.url.pathname.split("/")[3] ?? "";
    const order = isUuid(id) ? findOrder(deps.db, id) : null;
    if (!order || order.orgId !== req.session.orgId) {
      const refusal = notFound("no such order");
      return jsonResponse(refusal.body(), refusal.status);
    }
    return jsonResponse({ id: order.id, status: order.status, amountPence: order.amountPence });
  });
}
