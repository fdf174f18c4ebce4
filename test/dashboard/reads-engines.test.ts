// What the dashboard's pages, GET /v1/credits, GET /v1/jurisdictions, /healthz and the MCP
// account tools and resources read (src/dashboard/ledger-views.ts and the store functions they
// call), on SQLite and on PostgreSQL through the synchronous handle (test/helpers/engines.ts).
import { beforeAll, expect, test } from "bun:test";
import { createApiKey, createOrganisation, revokeApiKey } from "../../src/auth/service";
import { findOrganisation, listApiKeys, listEnabledJurisdictions, upsertJurisdiction } from "../../src/auth/store";
import { chargeRefundable, getBalance, refundCharge, reserve, settleAndRelease, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { findOrder, insertOrder, listEntries } from "../../src/billing/store";
import { DAY_MS, listLedgerPage, spendByDay, spendSince } from "../../src/dashboard/ledger-views";
import { forEachEngine, type TestEngine } from "../helpers/engines";

const START_MS = Date.UTC(2026, 4, 1);

forEachEngine((current) => {
  let engine: TestEngine;
  let orgId: string;
  beforeAll(() => {
    engine = current();
    const deps = { db: engine.db, clock: { nowMs: () => START_MS } };
    upsertJurisdiction(engine.db, { slug: "uk-fca", name: "FCA", description: "UK financial conduct" });
    upsertJurisdiction(engine.db, { slug: "eu-eba", name: "EBA", description: "EU banking" });
    orgId = createOrganisation(deps, { name: "Reader", jurisdictions: ["uk-fca", "eu-eba"] }).id;
    topUp(engine.db, { orgId, amountPence: 10_000, key: ledgerKeys.operatorTopUp(orgId, "start"), description: "start", nowMs: START_MS });
    // Day 1: a search charged 300p; day 2: a search charged 200p and refunded; day 3: a run held 1,000p and settled 400p.
    chargeRefundable(engine.db, { orgId, amountPence: 300, key: ledgerKeys.search("day-1"), description: "Search", nowMs: START_MS + DAY_MS + 5 });
    const refunded = chargeRefundable(engine.db, { orgId, amountPence: 200, key: ledgerKeys.search("day-2"), description: "Search", nowMs: START_MS + 2 * DAY_MS });
    refundCharge(engine.db, { charge: refunded, description: "Search failed", nowMs: START_MS + 2 * DAY_MS + 1 });
    reserve(engine.db, { orgId, amountPence: 1_000, runId: "run-1", description: "Screening", nowMs: START_MS + 3 * DAY_MS });
    settleAndRelease(engine.db, { orgId, runId: "run-1", actualPence: 400, description: "Screening", nowMs: START_MS + 3 * DAY_MS + 10 });
    reserve(engine.db, { orgId, amountPence: 700, runId: "run-2", description: "Screening", nowMs: START_MS + 3 * DAY_MS + 20 });
  });

  test("the balance: held credit is not spent, available is balance less held", () => {
    expect(getBalance(engine.db, orgId)).toEqual({ balancePence: 9_300, heldPence: 700, availablePence: 8_600, currency: "GBP" });
  });

  test("ledger pages: newest first, one type or all, by limit and offset", () => {
    const all = listLedgerPage(engine.db, orgId, { limit: 100, offset: 0 });
    expect(all.map((e) => [e.type, e.amountPence])).toEqual([
      ["reserve", -700],
      ["settle", -400],
      ["release", 1_000],
      ["reserve", -1_000],
      ["adjustment", 200],
      ["settle", -200],
      ["settle", -300],
      ["top_up", 10_000],
    ]);
    expect(listLedgerPage(engine.db, orgId, { limit: 3, offset: 2 })).toEqual(all.slice(2, 5));
    expect(listLedgerPage(engine.db, orgId, { type: "settle", limit: 100, offset: 0 }).map((e) => e.amountPence)).toEqual([-400, -200, -300]);
    expect(listLedgerPage(engine.db, orgId, { type: "settle", limit: 1, offset: 1 }).map((e) => e.amountPence)).toEqual([-200]);
    expect(listLedgerPage(engine.db, orgId, { type: "grant", limit: 100, offset: 0 })).toEqual([]);
    expect(listEntries(engine.db, orgId, 2, 0)).toEqual(all.slice(0, 2));
  });

  test("spend per UTC day counts charges less refunds, never holds", () => {
    expect([...spendByDay(engine.db, orgId, START_MS)].sort((a, b) => a[0] - b[0])).toEqual([
      [START_MS + DAY_MS, 300],
      [START_MS + 2 * DAY_MS, 0],
      [START_MS + 3 * DAY_MS, 400],
    ]);
    expect(spendSince(engine.db, orgId, START_MS)).toBe(700);
    expect(spendSince(engine.db, orgId, START_MS + 2 * DAY_MS)).toBe(400);
    expect(spendSince(engine.db, orgId, START_MS + 4 * DAY_MS)).toBe(0);
  });

  test("the organisation, its jurisdictions, keys and top-up orders as the pages, routes and MCP tools read them", () => {
    const deps = { db: engine.db, clock: { nowMs: () => START_MS } };
    expect(findOrganisation(engine.db, orgId)?.name).toBe("Reader");
    expect(listEnabledJurisdictions(engine.db, orgId).map((j) => j.slug)).toEqual(["eu-eba", "uk-fca"]);
    const kept = createApiKey(deps, { orgId, name: "kept" });
    const revoked = createApiKey(deps, { orgId, name: "revoked" });
    revokeApiKey(deps, revoked.id, orgId);
    expect(listApiKeys(engine.db, orgId).filter((k) => k.revokedAtMs === null).map((k) => k.id)).toEqual([kept.id]);
    const order = { id: crypto.randomUUID(), orgId, amountPence: 1_000, currency: "GBP" as const, status: "creating" as const };
    insertOrder(engine.db, { ...order, checkoutSessionId: null, checkoutUrl: null, createdAtMs: START_MS, updatedAtMs: START_MS });
    expect(findOrder(engine.db, order.id)).toMatchObject({ ...order, checkoutSessionId: null });
    expect(findOrder(engine.db, crypto.randomUUID())).toBeNull();
  });

  test("the health check's query", () => {
    expect(engine.db.query<{ ok: number }, []>("SELECT 1 AS ok").get()?.ok).toBe(1);
  });
});
