import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { verifyLedger } from "../../src/billing/ledger";
import { startFakeStripe, stripeSignature, type FakeStripe } from "../helpers/fake-stripe";
import { startTestServer, type TestServer } from "../helpers/server";

const WEBHOOK_SECRET = "whsec_test_regkb_malformed";

let fake: FakeStripe;
let server: TestServer;

beforeAll(async () => {
  fake = startFakeStripe();
  server = await startTestServer({
    background: false,
    env: { REGKB_STRIPE_SECRET_KEY: "sk_test_regkb_fake", REGKB_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, REGKB_STRIPE_API_BASE: fake.url },
  });
  fake.setWebhookTarget(`${server.url}/v1/webhooks/stripe`, WEBHOOK_SECRET);
});
afterAll(async () => {
  await server?.stop();
  fake?.stop();
});

/** Signed exactly as Stripe signs, so only the content is wrong. */
async function deliverSigned(payload: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}/v1/webhooks/stripe`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": stripeSignature(payload, WEBHOOK_SECRET) },
    body: payload,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Reported through the assertion below.
  }
  return { status: response.status, body };
}

const event = (fields: Record<string, unknown>) => JSON.stringify({ object: "event", api_version: "2025-01-27.acacia", created: 1, ...fields });
const completed = (id: string, extra: Record<string, unknown>) => event({ id, type: "checkout.session.completed", ...extra });

const MALFORMED: [string, string][] = [
  ["empty object", "{}"],
  ["array", "[]"],
  ["null", "null"],
  ["number", "42"],
  ["string", '"evt"'],
  ["not JSON", "{not json"],
  ["no type", event({ id: "evt_no_type" })],
  ["numeric type", event({ id: "evt_numeric_type", type: 7 })],
  ["numeric id", event({ id: 7, type: "checkout.session.completed", data: { object: { id: "cs_1" } } })],
  ["empty id", event({ id: "", type: "checkout.session.completed", data: { object: { id: "cs_1" } } })],
  ["id of 300 characters", event({ id: `evt_${"x".repeat(296)}`, type: "checkout.session.completed", data: { object: { id: "cs_1" } } })],
  ["no data", completed("evt_no_data", {})],
  ["data null", completed("evt_data_null", { data: null })],
  ["data.object null", completed("evt_object_null", { data: { object: null } })],
  ["data.object an array", completed("evt_object_array", { data: { object: [] } })],
  ["data.object a string", completed("evt_object_string", { data: { object: "cs_1" } })],
  ["session without id", completed("evt_session_no_id", { data: { object: { payment_status: "paid" } } })],
  ["session id a number", completed("evt_session_num_id", { data: { object: { id: 5, payment_status: "paid" } } })],
  ["metadata a string", completed("evt_meta_string", { data: { object: { id: "cs_1", metadata: "x" } } })],
  ["order_id an object", completed("evt_order_object", { data: { object: { id: "cs_1", metadata: { order_id: { a: 1 } } } } })],
  ["client_reference_id an array", completed("evt_ref_array", { data: { object: { id: "cs_1", client_reference_id: ["x"] } } })],
];

describe("signed but malformed Stripe events", () => {
  for (const [name, payload] of MALFORMED) {
    test(`${name}: 400 validation_failed, nothing recorded`, async () => {
      const response = await deliverSigned(payload);
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 400, error: "validation_failed" });
      expect(response.body.details).toStartWith("body");
    });
  }

  test("an event type we do not handle is acknowledged and ignored, whatever its data", async () => {
    for (const [id, extra] of [["evt_other_1", {}], ["evt_other_2", { data: null }], ["evt_other_3", { data: { object: null } }]] as const) {
      const response = await deliverSigned(event({ id, type: "customer.created", ...extra }));
      expect(response.status).toBe(200);
      expect(response.body.outcome).toStartWith("ignored");
    }
  });

  test("after all of them: no event recorded but the ignored ones, no credit, the ledger verifies, and a real payment still credits", async () => {
    const recorded = server.deps.db.query<{ id: string }, []>("SELECT id FROM stripe_events ORDER BY id").all().map((r) => r.id);
    expect(recorded).toEqual(["evt_other_1", "evt_other_2", "evt_other_3"]);
    expect(server.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM ledger_entries").get()!.n).toBe(0);
    const org = server.createOrg();
    const { body: order } = await server.api("/v1/top-ups", { key: org.key, body: { amountPence: 1500 } });
    const session = [...fake.sessions.values()].find((s) => s.client_reference_id === order.orderId)!;
    session.payment_status = "paid";
    const delivered = await fake.deliver("checkout.session.completed", session.id);
    expect(delivered.status).toBe(200);
    expect(((await delivered.json()) as any).outcome).toBe("credited");
    expect(verifyLedger(server.deps.db).ok).toBe(true);
  });
});
