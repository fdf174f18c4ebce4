// A database written by a version before migration 011 (ledger purposes): its entries are
// classified from their keys, and every step an old version left half done, or might replay,
// finds the entry the old version wrote instead of moving money twice.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { createApiKey, setOrganisationJurisdictions } from "../../src/auth/service";
import { grantMonthlyAllowance } from "../../src/billing/grants";
import * as ledger from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { findHoldProblems } from "../../src/billing/store";
import { spendByDay } from "../../src/dashboard/ledger-views";
import type { Deps } from "../../src/deps";
import { migrate } from "../../src/db/migrate";
import { migrations } from "../../src/db/migrations";
import { applyPragmas, cacheDir, databasePath } from "../../src/db/open";
import { loadVectorExtension } from "../../src/db/vector-extension";
import { claimIdempotencyKey } from "../../src/http/idempotency";
import { uuidv7 } from "../../src/ids";
import { runBinary } from "../helpers/binary";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";

const JANUARY_MS = Date.parse("2025-01-15T12:00:00.000Z");
let nowMs = JANUARY_MS;
const clock = { nowMs: () => nowMs };

const dataDir = tempDir("regkb-ledger-upgrade-");
const orgId = uuidv7();
const ids = { op1: uuidv7(), op2: uuidv7(), op3: uuidv7(), doc: uuidv7(), order: uuidv7(), openRun: uuidv7(), doneRun: uuidv7(), adjustment: uuidv7() };
const SEARCH_BODY = { query: "breach notification", jurisdictions: ["eu"], topK: 3 };
const IDEMPOTENCY_KEY = "search-before-the-upgrade";

/** What each key the old version wrote must be classified as. */
const OLD_ENTRIES: { type: string; amountPence: number; key: string; ref: string | null; description: string; purpose: string }[] = [
  { type: "top_up", amountPence: 1000, key: `topup:operator:${orgId}:wire-1`, ref: "wire-1", description: "Top-up recorded by an operator (reference wire-1)", purpose: "operator_top_up" },
  { type: "top_up", amountPence: 500, key: `topup:${ids.order}`, ref: ids.order, description: `Card top-up (order ${ids.order})`, purpose: "card_top_up" },
  { type: "grant", amountPence: 300, key: `grant:${orgId}:2025-01`, ref: null, description: "Monthly allowance for 2025-01", purpose: "monthly_grant" },
  // A search charged just before its process died: the Idempotency-Key retry must find it.
  { type: "settle", amountPence: -2, key: `search:${ids.op1}`, ref: ids.op1, description: "Search", purpose: "search" },
  { type: "settle", amountPence: -2, key: `search:${ids.op2}`, ref: ids.op2, description: "Search", purpose: "search" },
  { type: "adjustment", amountPence: 2, key: `refund:search:${ids.op2}`, ref: ids.op2, description: "Refund: the search failed", purpose: "search_refund" },
  // An operation that failed, was refunded, and then paid again on its retry.
  { type: "settle", amountPence: -2, key: `search:${ids.op3}`, ref: ids.op3, description: "Search (MCP)", purpose: "search" },
  { type: "adjustment", amountPence: 2, key: `refund:search:${ids.op3}`, ref: ids.op3, description: "Refund: the search (MCP) failed", purpose: "search_refund" },
  { type: "settle", amountPence: -2, key: `search:${ids.op3}:retry-1`, ref: ids.op3, description: "Search (MCP)", purpose: "search" },
  { type: "settle", amountPence: -10, key: `doc:${ids.doc}`, ref: ids.doc, description: "Document ingestion: a.pdf (1 page)", purpose: "document" },
  { type: "adjustment", amountPence: 10, key: `refund:${ids.doc}`, ref: ids.doc, description: "Refund: ingestion of a.pdf failed", purpose: "document_refund" },
  { type: "reserve", amountPence: -65, key: `reserve:${ids.openRun}`, ref: ids.openRun, description: "execution: hold for up to 60 s", purpose: "run_hold" },
  { type: "reserve", amountPence: -20, key: `reserve:${ids.doneRun}`, ref: ids.doneRun, description: "screening: hold", purpose: "run_hold" },
  { type: "release", amountPence: 20, key: `release:${ids.doneRun}`, ref: ids.doneRun, description: "screening completed", purpose: "run_release" },
  { type: "settle", amountPence: -20, key: `settle:${ids.doneRun}`, ref: ids.doneRun, description: "screening completed", purpose: "run_settle" },
  { type: "adjustment", amountPence: -5, key: `adjustment:${ids.adjustment}`, ref: null, description: "Operator adjustment: goodwill reversed", purpose: "operator_adjustment" },
  // A key no version of regkb builds (an operator's own script, say): kept, and counted as before.
  { type: "settle", amountPence: -3, key: `direct:${orgId}:1`, ref: null, description: "Charged by hand", purpose: "legacy" },
];

let server: TestServer | undefined;

/** The schema and rows an installation of the previous version holds, written as that version wrote them. */
async function writeOldDatabase(): Promise<void> {
  const db = new Database(databasePath(dataDir), { create: true, strict: true });
  applyPragmas(db, "full");
  await loadVectorExtension(db, cacheDir(dataDir));
  expect(migrate(db, migrations.filter((m) => m.version <= 10), JANUARY_MS)).not.toContain(11);
  db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, 'Upgraded', 300, ?)").run(orgId, JANUARY_MS);
  const insert = db.query(
    `INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, ref, created_at_ms)
     VALUES (?, ?, ?, ?, 'GBP', ?, ?, ?, ?)`,
  );
  OLD_ENTRIES.forEach((e, i) => insert.run(uuidv7(), orgId, e.type, e.amountPence, e.description, e.key, e.ref, JANUARY_MS + i));
  // The old server's claim on the Idempotency-Key of the search it charged, its lease long lapsed.
  const oldServer = { db, clock } as unknown as Deps;
  const claimed = await claimIdempotencyKey(oldServer, { orgId, key: IDEMPOTENCY_KEY, method: "POST", route: "/v1/search", body: SEARCH_BODY }, { leaseMs: 1 });
  db.query("UPDATE idempotency_keys SET operation_id = ? WHERE org_id = ? AND key = ?").run(ids.op1, orgId, IDEMPOTENCY_KEY);
  expect(claimed.kind).toBe("claimed");
  db.close();
}

beforeAll(async () => {
  await writeOldDatabase();
  nowMs = JANUARY_MS + 60_000;
  server = await startTestServer({ dataDir, clock, background: false });
  setOrganisationJurisdictions(server!.deps, orgId, ["eu"]);
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const entriesByKey = () =>
  new Map(
    server!.deps.db
      .query<{ key: string; purpose: string; id: string }, [string]>("SELECT idempotency_key AS key, purpose, id FROM ledger_entries WHERE org_id = ?")
      .all(orgId)
      .map((e) => [e.key, e]),
  );

test("migration 011 classifies every old entry by its key, and the ledger stays append-only", () => {
  const entries = entriesByKey();
  for (const old of OLD_ENTRIES) expect(entries.get(old.key)?.purpose, old.key).toBe(old.purpose);
  expect(() => server!.deps.db.exec("UPDATE ledger_entries SET purpose = 'search' WHERE purpose = 'legacy'")).toThrow("append-only");
  expect(() =>
    server!.deps.db
      .query(
        `INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, ref, created_at_ms)
         VALUES (?, ?, 'top_up', 1, 'GBP', 'no purpose', 'topup:no-purpose', NULL, 0)`,
      )
      .run(uuidv7(), orgId),
  ).toThrow("needs a purpose");
  expect(() =>
    server!.deps.db
      .query(
        `INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, purpose, ref, created_at_ms)
         VALUES (?, ?, 'top_up', 1, 'GBP', 'wrong purpose', 'topup:wrong-purpose', 'search', NULL, 0)`,
      )
      .run(uuidv7(), orgId),
  ).toThrow("CHECK constraint failed");
});

test("reads by purpose give what the old reads by key prefix gave", () => {
  const db = server!.deps.db;
  const oldSpend = db
    .query<{ day: number; spendPence: number }, [number, string, number]>(
      `SELECT (created_at_ms / ?1) AS day, -SUM(amount_pence) AS spendPence FROM ledger_entries
       WHERE org_id = ?2 AND created_at_ms >= ?3
         AND (type = 'settle' OR (type = 'adjustment' AND idempotency_key LIKE 'refund:%'))
       GROUP BY day`,
    )
    .all(86_400_000, orgId, 0);
  const spend = spendByDay(db, orgId, 0);
  expect(spend).toEqual(new Map(oldSpend.map((r) => [r.day * 86_400_000, r.spendPence])));
  expect([...spend.values()]).toEqual([2 + 2 - 2 + 2 - 2 + 2 + 10 - 10 + 20 + 3]);
  expect(findHoldProblems(db, 100)).toEqual([]);
});

test("an Idempotency-Key retry across the upgrade finds the old charge: answered once, charged once", async () => {
  const { key } = createApiKey(server!.deps, { orgId });
  nowMs += 1_000;
  const headers = { "idempotency-key": IDEMPOTENCY_KEY };
  const retried = await server!.api("/v1/search", { key, body: SEARCH_BODY, headers });
  expect(retried.status).toBe(200);
  expect(retried.body).toMatchObject({ requestId: ids.op1, creditsChargedPence: 2 });
  const replayed = await server!.api("/v1/search", { key, body: SEARCH_BODY, headers });
  expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  const op1Entries = server!.deps.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM ledger_entries WHERE ref = ?").get(ids.op1)!.n;
  expect(op1Entries).toBe(1);
});

test("every other key an old version wrote replays to its entry; unfinished work finishes once", () => {
  const { db } = server!.deps;
  const before = entriesByKey();
  const idOf = (key: string) => before.get(key)!.id;

  // A search attempted again after its refunded failure pays again, under the next attempt's key.
  const retry = ledger.chargeRefundable(db, { orgId, amountPence: 2, key: ledgerKeys.search(ids.op2), description: "Search", ref: ids.op2, nowMs: Date.now() });
  expect(retry.entry.key).toBe(`search:${ids.op2}:retry-1`);
  // One that already paid on its retry before the upgrade finds that charge.
  const paid = ledger.chargeRefundable(db, { orgId, amountPence: 2, key: ledgerKeys.search(ids.op3), description: "Search (MCP)", ref: ids.op3, nowMs: Date.now() });
  expect(paid.entry.id).toBe(idOf(`search:${ids.op3}:retry-1`));

  expect(ledger.charge(db, { orgId, amountPence: 10, key: ledgerKeys.document(ids.doc), description: "Document ingestion: a.pdf (1 page)", nowMs: Date.now() }).id).toBe(idOf(`doc:${ids.doc}`));
  expect(ledger.refund(db, { orgId, amountPence: 10, key: ledgerKeys.documentRefund(ids.doc), description: "Refund", nowMs: Date.now() }).id).toBe(idOf(`refund:${ids.doc}`));
  expect(ledger.topUp(db, { orgId, amountPence: 500, key: ledgerKeys.cardTopUp(ids.order), description: "Card top-up", nowMs: Date.now() }).id).toBe(idOf(`topup:${ids.order}`));
  expect(recordOperatorTopUp(server!.deps, { orgId, amountPence: 1000, reference: "wire-1" })).toMatchObject({ created: false, entry: { id: idOf(`topup:operator:${orgId}:wire-1`) } });
  expect(ledger.adjust(db, { orgId, amountPence: -5, reason: "goodwill reversed", key: ledgerKeys.operatorAdjustment(ids.adjustment), nowMs: Date.now() }).id).toBe(idOf(`adjustment:${ids.adjustment}`));
  expect(grantMonthlyAllowance(server!.deps, orgId)).toBe(false);
  expect(ledger.grant(db, { orgId, amountPence: 300, month: "2025-01", nowMs: Date.now() })).toMatchObject({ created: false, entry: { id: idOf(`grant:${orgId}:2025-01`) } });

  // The run that was running at the upgrade settles against the hold the old version placed; the finished one stays finished.
  ledger.settleAndRelease(db, { orgId, runId: ids.openRun, actualPence: 40, description: "execution completed", nowMs: Date.now() });
  ledger.settleAndRelease(db, { orgId, runId: ids.doneRun, actualPence: 20, description: "screening completed", nowMs: Date.now() });
  ledger.release(db, { orgId, runId: ids.doneRun, description: "screening failed", nowMs: Date.now() });

  const after = entriesByKey();
  expect([...after.keys()].filter((key) => !before.has(key)).toSorted()).toEqual(
    [`search:${ids.op2}:retry-1`, `release:${ids.openRun}`, `settle:${ids.openRun}`].toSorted(),
  );
  expect(after.get(`settle:${ids.openRun}`)?.purpose).toBe("run_settle");
  // 1768 before (65 held); the search attempted again 2p, the run 40p.
  expect(ledger.getBalance(db, orgId)).toEqual({ balancePence: 1768 - 2 - 40, heldPence: 0, availablePence: 1726, currency: "GBP" });
  expect(ledger.verifyLedger(db).ok).toBe(true);
});

test("regkb credits verify passes on the upgraded database", async () => {
  await server!.stop();
  server = undefined;
  const verified = runBinary(["credits", "verify", "--json", "--data-dir", dataDir]);
  expect(verified.exitCode, verified.stderr).toBe(0);
  expect(verified.json).toMatchObject({ ok: true, organisations: 1 });
});
