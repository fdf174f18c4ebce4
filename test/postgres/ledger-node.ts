// One "node" for ledger-nodes.test.ts: a process of its own with its own synchronous
// PostgreSQL handle. It says `ready`, waits for `go` on stdin, then charges as told and
// prints one JSON line: the outcome of each charge (the entry id, or "402").
//   spend URL ORG COUNT PENCE KEY_PREFIX   charges COUNT times under KEY_PREFIX-<i>
//   hold URL ORG KEY HOLD_MS               charges under KEY inside a transaction it keeps open HOLD_MS after the insert
import { charge } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { Refusal } from "../../src/errors";
import { say } from "../helpers/node-child";

const [mode, url, orgId, ...rest] = process.argv.slice(2);
const db = openPostgresHandle({ url: url! });
// Written synchronously: in `hold` the thread blocks inside the transaction right after.

say("ready");
for await (const line of console) if (line.trim() === "go") break;

if (mode === "spend") {
  const [count, pence, prefix] = [Number(rest[0]), Number(rest[1]), rest[2]!];
  const outcomes: string[] = [];
  for (let i = 0; i < count; i++) {
    try {
      outcomes.push(charge(db, { orgId: orgId!, amountPence: pence, key: ledgerKeys.search(`${prefix}-${i}`), description: "node test", nowMs: Date.now() }).id);
    } catch (error) {
      if (!(error instanceof Refusal && error.status === 402)) throw error;
      outcomes.push("402");
    }
  }
  say(JSON.stringify(outcomes));
} else {
  const [key, holdMs] = [rest[0]!, Number(rest[1])];
  db.transaction(() => {
    const entry = charge(db, { orgId: orgId!, amountPence: 1, key: ledgerKeys.search(key), description: "node test", nowMs: Date.now() });
    say(JSON.stringify([entry.id]));
    db.query("SELECT pg_sleep(?)").get(holdMs / 1000);
  }).immediate();
}
db.close();
