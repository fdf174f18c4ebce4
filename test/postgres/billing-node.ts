// One "node" for billing-nodes.test.ts: a process of its own with its own synchronous
// PostgreSQL handle. It says `ready`, waits for `go` on stdin, then does its part and prints
// the result as one JSON line:
//   webhooks URL PREFIX COUNT  applies the paid checkout event evt_PREFIX_<i> of order PREFIX-<i>
//                              (session cs_PREFIX_<i>) for i = 0 … COUNT − 1; prints the outcomes
//   tick URL ROUNDS            runs the billing tick ROUNDS times; prints the summed counts
import { paymentEvent, StripePayments } from "../../src/billing/stripe";
import { billingTick } from "../../src/billing/ticker";
import { applyPaymentEvent } from "../../src/billing/top-ups";
import { systemClock } from "../../src/clock";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { createLogger } from "../../src/log";
import { say } from "../helpers/node-child";

const [mode, url, ...args] = process.argv.slice(2);
const db = openPostgresHandle({ url: url! });
const log = createLogger("silent");

say("ready");
for await (const line of console) if (line.trim() === "go") break;

if (mode === "webhooks") {
  const [prefix, count] = args;
  const deps = { db, clock: systemClock, log, config: { publicUrl: "https://regkb.example.com" }, payments: new StripePayments({ stripeSecretKey: undefined, stripeWebhookSecret: undefined, stripeApiBase: undefined }, log) };
  const outcomes: string[] = [];
  for (let i = 0; i < Number(count); i++) {
    const session = { id: `cs_${prefix}_${i}`, payment_status: "paid", amount_total: 1_000, metadata: { order_id: `${prefix}-${i}` } };
    outcomes.push(applyPaymentEvent(deps, paymentEvent({ id: `evt_${prefix}_${i}`, type: "checkout.session.completed", data: { object: session } })));
  }
  say(JSON.stringify(outcomes));
} else {
  const sums = { grants: 0, idempotencyKeysPurged: 0, stripeEventsPurged: 0 };
  for (let round = 0; round < Number(args[0]); round++) {
    const done = billingTick({ db, clock: systemClock, log });
    sums.grants += done.grants;
    sums.idempotencyKeysPurged += done.idempotencyKeysPurged;
    sums.stripeEventsPurged += done.stripeEventsPurged;
  }
  say(JSON.stringify(sums));
}
db.close();
