// One "node" for auth-nodes.test.ts: a process of its own with its own synchronous PostgreSQL
// handle. It says `ready`, waits for `go` on stdin, then replaces the organisation's
// jurisdictions COUNT times (alternately both of SLUGS and the first alone) and prints `done`.
//   URL ORG COUNT SLUG_A SLUG_B
import { setOrganisationJurisdictions } from "../../src/auth/service";
import { systemClock } from "../../src/clock";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { say } from "../helpers/node-child";

const [url, orgId, count, slugA, slugB] = process.argv.slice(2);
const db = openPostgresHandle({ url: url! });

say("ready");
for await (const line of console) if (line.trim() === "go") break;

for (let i = 0; i < Number(count); i++) {
  setOrganisationJurisdictions({ db, clock: systemClock }, orgId!, i % 2 === 0 ? [slugA!, slugB!] : [slugA!]);
}
say("done");
db.close();
