// One "node" for run-kinds-nodes.test.ts: a process of its own with its own synchronous
// PostgreSQL handle and its own search index (a SQLite file holding one passage), using the
// screening service and the run engine exactly as a server would. It says `ready` and waits
// for `go` on stdin.
//   engine URL LEASE_MS POLL_MS LISTEN KEYWORD_DELAY_MS
//                       runs a RunEngine serving screenings (polling every POLL_MS; LISTEN=1: woken by
//                       notifications on its own Bun.sql connection); prints {"owner"} once started,
//                       until `stop` on stdin
//   create-held URL ORG_ID RUN_ID
//                       creates screening RUN_ID for ORG_ID inside a transaction it keeps open: prints
//                       `holding`, waits 1.5 s, commits, prints `committed`
import { rmSync } from "node:fs";
import { upsertJurisdiction } from "../../src/auth/store";
import { systemClock } from "../../src/clock";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import { openPostgresHandle, type PostgresHandle } from "../../src/db/postgres/sync/handle";
import { immediate } from "../../src/db/transaction";
import { RunEngine } from "../../src/jobs/engine";
import { createLogger } from "../../src/log";
import { Metrics } from "../../src/metrics";
import { indexDocument } from "../../src/search/indexing";
import { createScreening, screeningRunKind, type ScreeningDeps } from "../../src/screenings/service";
import { say, waitFor } from "../helpers/node-child";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

export const NODE_PASSAGE = "The controller shall notify a personal data breach within 72 hours.";

const [mode, url, ...rest] = process.argv.slice(2) as [string, string, ...string[]];
const db = openPostgresHandle({ url });

const indexDir = tempDir("regkb-run-kinds-node-");
const indexDb = await openDatabase(indexDir);
upsertJurisdiction(indexDb, { slug: "eu", name: "European Union", description: "EU law" });
const searchIndex = await readySearchIndex(indexDb);
await indexDocument(
  { searchIndex },
  {
    documentId: "node-corpus",
    ownerOrgId: null,
    jurisdictions: ["eu"],
    passages: [{ source: "GDPR Article 33", citationPath: "GDPR Article 33", text: NODE_PASSAGE, position: 0 }],
  },
);
const [leaseMs, pollMs, listen, keywordDelayMs] = mode === "engine" ? rest.map(Number) : [60_000, 1_000, 0, 0];
const listener = listen === 1 ? openPostgres({ url, poolSize: 1 }) : undefined;
const log = createLogger("warn");
const jobs = new RunEngine<PostgresHandle>({
  config: { runLeaseMs: leaseMs!, runMaxAttempts: 3, shutdownTimeoutMs: 5_000, runsPerOrganisationMax: 0 },
  db,
  clock: systemClock,
  log,
  metrics: new Metrics(),
  pollIntervalMs: pollMs,
  listener,
});
const deps: ScreeningDeps = {
  db,
  clock: systemClock,
  jobs,
  searchIndex,
  config: { screeningConcurrency: 2, testHookScreeningKeywordDelayMs: keywordDelayMs! },
};

say("ready");
await waitFor("go");

if (mode === "engine") {
  jobs.register(screeningRunKind(deps));
  await jobs.start();
  say(JSON.stringify({ owner: jobs.owner }));
  await waitFor("stop");
  await jobs.stop();
  say("stopped");
} else {
  const [orgId, runId] = rest as [string, string];
  immediate(db, () => {
    createScreening(deps, orgId, runId, { keywords: ["breach"] });
    say("holding");
    Bun.sleepSync(1_500);
  });
  say("committed");
}
db.close();
await listener?.close();
indexDb.close();
rmSync(indexDir, { recursive: true, force: true });
// stdin is still open (the test may write more): leave without waiting for it.
process.exit(0);
