import { afterAll, beforeAll, expect, test } from "bun:test";
import { charge, getBalance } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { billingTick } from "../../src/billing/ticker";
import { startTestServer, type TestServer } from "../helpers/server";

let nowMs = Date.parse("2025-01-31T23:58:00.000Z");
const clock = { nowMs: () => nowMs };
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ clock, background: false });
});

afterAll(async () => {
  await server?.stop();
});

function grants(orgId: string): { key: string; amountPence: number }[] {
  return server.deps.db
    .query<{ key: string; amountPence: number }, [string]>(
      "SELECT idempotency_key AS key, amount_pence AS amountPence FROM ledger_entries WHERE org_id = ? AND type = 'grant' ORDER BY created_at_ms",
    )
    .all(orgId);
}

test("one grant per calendar month (UTC), from requests and the tick racing; unused allowance rolls over", async () => {
  const org = server.createOrg({ monthlyAllowancePence: 500 });
  const plain = server.createOrg();

  // January: the first authenticated request grants; more requests and ticks do not.
  await Promise.all(Array.from({ length: 10 }, () => server.api("/v1/credits", { key: org.key })));
  billingTick(server.deps);
  expect(grants(org.orgId)).toEqual([{ key: `grant:${org.orgId}:2025-01`, amountPence: 500 }]);
  expect((await server.api("/v1/credits", { key: plain.key })).body.balancePence).toBe(0);

  // Spend part of it; what is left rolls over.
  charge(server.deps.db, { orgId: org.orgId, amountPence: 120, key: ledgerKeys.search(`allowance-spend-${org.orgId}`), description: "Spend", nowMs });

  // Cross the month boundary: requests and the tick race for February's grant.
  nowMs = Date.parse("2025-02-01T00:00:30.000Z");
  await Promise.all([
    ...Array.from({ length: 10 }, () => server.api("/v1/credits", { key: org.key })),
    Promise.resolve().then(() => billingTick(server.deps)),
  ]);
  billingTick(server.deps);
  expect(grants(org.orgId).map((g) => g.key)).toEqual([`grant:${org.orgId}:2025-01`, `grant:${org.orgId}:2025-02`]);
  expect(getBalance(server.deps.db, org.orgId).balancePence).toBe(500 - 120 + 500);

  // Later in February nothing more; in March the tick alone grants (no request needed).
  nowMs = Date.parse("2025-02-27T12:00:00.000Z");
  await server.api("/v1/credits", { key: org.key });
  billingTick(server.deps);
  expect(grants(org.orgId)).toHaveLength(2);
  nowMs = Date.parse("2025-03-01T00:00:00.000Z");
  expect(billingTick(server.deps).grants).toBe(1);
  expect(grants(org.orgId)).toHaveLength(3);
  expect(grants(plain.orgId)).toHaveLength(0);
});
