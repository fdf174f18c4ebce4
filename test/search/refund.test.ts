import { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { databasePath } from "../../src/db/open";
import { importPassages, loadSampleCorpus } from "../../src/search/corpus/import";
import { startTestServer, TEST_JURISDICTIONS, type TestServer } from "../helpers/server";

let server: TestServer;
/** A second connection to the same file, as an operator's sqlite3 shell would be. */
let operator: Database;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  const slugs = new Set(TEST_JURISDICTIONS.map((j) => j.slug));
  const { passages } = await loadSampleCorpus();
  await importPassages(server.deps, { jurisdictions: [], passages: passages.filter((p) => p.jurisdictions.every((s) => slugs.has(s))) });
  operator = new Database(databasePath(server.dataDir));
  operator.exec("PRAGMA busy_timeout = 10000");
});
afterAll(async () => {
  operator.close();
  await server.stop();
});

/** The BM25 index disappears under the running server (the charge does not touch it; the search does). */
const breakIndex = () => operator.exec("ALTER TABLE search_fts RENAME TO search_fts_away");
const repairIndex = () => operator.exec("ALTER TABLE search_fts_away RENAME TO search_fts");

type Entry = { type: string; amountPence: number; key: string; ref: string | null };
function entries(orgId: string): Entry[] {
  return server.deps.db
    .query<Entry, [string]>("SELECT type, amount_pence AS amountPence, idempotency_key AS key, ref FROM ledger_entries WHERE org_id = ? AND type <> 'top_up' ORDER BY created_at_ms, id")
    .all(orgId);
}

const QUERY = { query: "notify the supervisory authority of a personal data breach", topK: 3 };

test("a search that fails after its charge is refunded in the same request: failed, not charged", async () => {
  const org = server.createOrg({ balancePence: 100 });
  breakIndex();
  try {
    const failed = await server.api("/v1/search", { key: org.key, body: QUERY });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toBe("internal_error");
    expect(getBalance(server.deps.db, org.orgId)).toMatchObject({ balancePence: 100, availablePence: 100 });
    const [charged, refunded, ...rest] = entries(org.orgId);
    expect(rest).toEqual([]);
    expect(charged).toMatchObject({ type: "settle", amountPence: -2 });
    expect(refunded).toMatchObject({ type: "adjustment", amountPence: 2, ref: charged!.ref });
  } finally {
    repairIndex();
  }
  expect((await server.api("/v1/search", { key: org.key, body: QUERY })).status).toBe(200);
  expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(98);
  expect(verifyLedger(server.deps.db).ok).toBe(true);
});

test("retries under one Idempotency-Key: each failure refunded once, the success charged once, the replay not at all", async () => {
  const org = server.createOrg({ balancePence: 100 });
  const headers = { "idempotency-key": "search-refund-retry-1" };
  breakIndex();
  try {
    for (let i = 0; i < 3; i++) {
      expect((await server.api("/v1/search", { key: org.key, body: QUERY, headers })).status).toBe(500);
      expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(100);
    }
  } finally {
    repairIndex();
  }
  const succeeded = await server.api("/v1/search", { key: org.key, body: QUERY, headers });
  expect(succeeded.status).toBe(200);
  expect(succeeded.body.creditsChargedPence).toBe(2);
  expect(succeeded.body.availablePence).toBe(98);
  const replayed = await server.api("/v1/search", { key: org.key, body: QUERY, headers });
  expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  expect(replayed.body).toEqual(succeeded.body);
  expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(98);

  const all = entries(org.orgId);
  // Every entry belongs to the one operation: three charge/refund pairs, then one charge.
  expect(new Set(all.map((e) => e.ref))).toEqual(new Set([succeeded.body.requestId]));
  expect(all.map((e) => [e.type, e.amountPence])).toEqual([
    ["settle", -2], ["adjustment", 2],
    ["settle", -2], ["adjustment", 2],
    ["settle", -2], ["adjustment", 2],
    ["settle", -2],
  ]);
  expect(new Set(all.map((e) => e.key)).size).toBe(all.length);
  expect(verifyLedger(server.deps.db).ok).toBe(true);
});

test("performSearch itself (the dashboard playground calls it too) refunds its charge when the search fails", async () => {
  const org = server.createOrg({ balancePence: 10 });
  breakIndex();
  try {
    const { performSearch } = await import("../../src/search/perform");
    const operationId = crypto.randomUUID();
    await expect(performSearch(server.deps, { orgId: org.orgId, query: QUERY.query, operationId })).rejects.toThrow();
    expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(10);
  } finally {
    repairIndex();
  }
});
