// One "node" for own-answers.test.ts: a process with its own synchronous PostgreSQL handle,
// running the stores' statements as a server does while other nodes contend for the same
// organisations: in each round it locks one, creates a run, reads the run and the
// organisation back, and tries to insert the organisation again (a unique violation). It
// says `ready`, waits for `go`, then prints one JSON line {"checked", "wrong"} and exits.
//   URL ROUNDS ORG_ID...
import { say, waitFor } from "../helpers/node-child";
import { findOrganisation, insertOrganisation, lockOrganisation } from "../../src/auth/store";
import { openPostgresHandle, PostgresStatementError } from "../../src/db/postgres/sync/handle";
import { immediate } from "../../src/db/transaction";
import { uuidv7 } from "../../src/ids";
import { createRun, findRun } from "../../src/jobs/store";

const RUN_KIND = "own-answers";

const [url, rounds, ...orgIds] = process.argv.slice(2) as [string, string, ...string[]];
const db = openPostgresHandle({ url });

/** What went wrong in one round, or nothing: each answer must be the one its own statement asked for. */
function round(index: number): string[] {
  const orgId = orgIds[index % orgIds.length]!;
  const runId = uuidv7();
  const input = { runId, index };
  const wrong: string[] = [];
  immediate(db, () => {
    if (!lockOrganisation(db, orgId)) wrong.push(`lockOrganisation(${orgId}) found nothing`);
    createRun(db, { id: runId, orgId, kind: RUN_KIND, input, createdAtMs: Date.now() });
    const run = findRun(db, { id: runId, orgId, kind: RUN_KIND });
    if (JSON.stringify(run?.input) !== JSON.stringify(input)) wrong.push(`findRun(${runId}) in its transaction gave ${JSON.stringify(run)}`);
  });
  if (findOrganisation(db, orgId)?.id !== orgId) wrong.push(`findOrganisation(${orgId}) gave another answer`);
  try {
    insertOrganisation(db, { id: orgId, name: "again", monthlyAllowancePence: 0, createdAtMs: 0 });
    wrong.push(`inserting organisation ${orgId} again succeeded`);
  } catch (error) {
    if ((error as PostgresStatementError).sqlState !== "23505") wrong.push(`inserting organisation ${orgId} again: ${(error as Error).message}`);
  }
  const run = findRun(db, { id: runId, orgId, kind: RUN_KIND });
  if (JSON.stringify(run?.input) !== JSON.stringify(input)) wrong.push(`findRun(${runId}) gave ${JSON.stringify(run)}`);
  return wrong;
}

say("ready");
await waitFor("go");
const wrong: string[] = [];
for (let i = 0; i < Number(rounds); i++) wrong.push(...round(i));
say(JSON.stringify({ checked: Number(rounds), wrong }));
db.close();
process.exit(0);
