// One "node" for login-nodes.test.ts: a process of its own with its own synchronous PostgreSQL
// handle. It says `ready`, waits for `go` on stdin, then reserves ATTEMPTS sign-in attempts on
// each of EMAILS addresses in turn (from an address of its own per email, so only the per-email limit
// binds) and prints, as JSON, how many were let through per address.
//   URL NODE EMAILS ATTEMPTS
import { systemClock } from "../../src/clock";
import { reserveLoginAttempt } from "../../src/dashboard/login-limit";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { Refusal } from "../../src/errors";
import { say } from "../helpers/node-child";

const [url, node, emails, attempts] = process.argv.slice(2);
const db = openPostgresHandle({ url: url! });

say("ready");
for await (const line of console) if (line.trim() === "go") break;

const allowed: number[] = [];
for (let e = 0; e < Number(emails); e++) {
  allowed.push(0);
  for (let a = 0; a < Number(attempts); a++) {
    try {
      reserveLoginAttempt({ db, clock: systemClock }, `user${e}@example.com`, `node-${node}-${e}`);
      allowed[e]!++;
    } catch (error) {
      if (!(error instanceof Refusal) || error.code !== "rate_limited") throw error;
    }
  }
}
say(JSON.stringify(allowed));
db.close();
