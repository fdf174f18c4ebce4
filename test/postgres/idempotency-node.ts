// One "node" for idempotency-nodes.test.ts: a process of its own with its own synchronous
// PostgreSQL handle. It says `ready`, waits for `go` on stdin, then claims PREFIX-0 …
// PREFIX-(COUNT-1) in turn without waiting for holders, keeping each key it wins, and prints
// one JSON line: per key, the operation id it was given, or "busy" (409 idempotency_key_reused).
//   URL ORG PREFIX COUNT
import { systemClock } from "../../src/clock";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { Refusal } from "../../src/errors";
import { claimIdempotencyKey } from "../../src/http/idempotency";
import { say } from "../helpers/node-child";

const [url, orgId, prefix, count] = process.argv.slice(2);
const db = openPostgresHandle({ url: url! });

say("ready");
for await (const line of console) if (line.trim() === "go") break;

const outcomes: string[] = [];
for (let i = 0; i < Number(count); i++) {
  const request = { orgId: orgId!, key: `${prefix}-${i}`, method: "POST", route: "/v1/search", body: { query: "capital" } };
  try {
    const outcome = await claimIdempotencyKey({ db, clock: systemClock }, request, { waitMs: 0 });
    outcomes.push(outcome.kind === "claimed" ? outcome.claim.operationId : `replay ${outcome.status}`);
  } catch (error) {
    if (!(error instanceof Refusal && error.code === "idempotency_key_reused")) throw error;
    outcomes.push("busy");
  }
}
say(JSON.stringify(outcomes));
db.close();
