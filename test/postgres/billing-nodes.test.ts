// Two nodes on one PostgreSQL database: real child processes (billing-node.ts), each with its
// own synchronous handle. Both receive every Stripe webhook (a load balancer may deliver one
// event to each of two nodes when Stripe retries): each order is credited once, and each event
// is answered "credited" by one node and as a redelivery by the other, as on SQLite. Both tick
// at once: each organisation's allowance is granted once, old event ids are purged once.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { insertOrder, recordStripeEvent, setOrderCheckout } from "../../src/billing/store";
import { STRIPE_EVENT_RETENTION_MS } from "../../src/billing/top-ups";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "billing-node.ts");
const ORDERS = 60;
const ORGANISATIONS = 150;
const OLD_EVENTS = 2_000;
const ALLOWANCE_PENCE = 300;

describe("billing from two nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  beforeAll(() => {
    pg = engine();
  });

  async function runNodes(argsPerNode: string[][]): Promise<unknown[]> {
    const nodes = await startNodes(NODE_SCRIPT, argsPerNode);
    for (const node of nodes) tell(node, "go");
    const results = await Promise.all(nodes.map(async (node) => JSON.parse(await nextLine(node, "result")) as unknown));
    for (const node of nodes) expect(await node.proc.exited).toBe(0);
    return results;
  }

  test(`the same ${ORDERS} paid checkout events delivered to both nodes at once: each order credited once, each event credited by one node`, async () => {
    const orgId = pg.createOrganisation("Paid from two nodes");
    const nowMs = Date.now();
    for (let i = 0; i < ORDERS; i++) {
      const order = { id: `both-${i}`, orgId, amountPence: 1_000, currency: "GBP" as const, status: "creating" as const };
      insertOrder(pg.db, { ...order, checkoutSessionId: null, checkoutUrl: null, createdAtMs: nowMs, updatedAtMs: nowMs });
      setOrderCheckout(pg.db, order.id, `cs_both_${i}`, `https://checkout.example/${i}`, nowMs);
    }
    const [a, b] = (await runNodes([0, 1].map(() => ["webhooks", pg.url!, "both", String(ORDERS)]))) as string[][];
    for (let i = 0; i < ORDERS; i++) expect([a![i], b![i]].sort()).toEqual(["credited", "duplicate event (credited)"]);
    expect(getBalance(pg.db, orgId).balancePence).toBe(ORDERS * 1_000);
    const entries = pg.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM ledger_entries WHERE org_id = ? AND type = 'top_up'").get(orgId)!.n;
    expect(entries).toBe(ORDERS);
    const paid = pg.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM top_up_orders WHERE org_id = ? AND status = 'paid'").get(orgId)!.n;
    expect(paid).toBe(ORDERS);
    expect(verifyLedger(pg.db).ok).toBe(true);
  }, 120_000);

  test(`both nodes tick at once: ${ORGANISATIONS} allowances granted once each, ${OLD_EVENTS} old event ids purged once`, async () => {
    const orgIds = Array.from({ length: ORGANISATIONS }, (_, i) => pg.createOrganisation(`Allowance ${i}`, ALLOWANCE_PENCE));
    const oldMs = Date.now() - STRIPE_EVENT_RETENTION_MS - 60_000;
    for (let i = 0; i < OLD_EVENTS; i++) recordStripeEvent(pg.db, { id: `evt_old_${i}`, type: "t", orderId: null, outcome: "o", receivedAtMs: oldMs + i });
    const sums = (await runNodes([0, 1].map(() => ["tick", pg.url!, "3"]))) as { grants: number; stripeEventsPurged: number }[];
    expect(sums[0]!.grants + sums[1]!.grants).toBe(ORGANISATIONS);
    expect(sums[0]!.stripeEventsPurged + sums[1]!.stripeEventsPurged).toBe(OLD_EVENTS);
    for (const orgId of orgIds) expect(getBalance(pg.db, orgId).balancePence).toBe(ALLOWANCE_PENCE);
    const grants = pg.db.query<{ n: number }, []>("SELECT count(*) AS n FROM ledger_entries WHERE type = 'grant'").get()!.n;
    expect(grants).toBe(ORGANISATIONS);
    expect(pg.db.query<{ n: number }, []>("SELECT count(*) AS n FROM stripe_events WHERE id LIKE 'evt_old_%'").get()!.n).toBe(0);
    expect(verifyLedger(pg.db).ok).toBe(true);
  }, 120_000);
});
