/**
 * Claims per second from the runs store (src/jobs/store.ts claimNextRun), one process, on
 * PostgreSQL through the synchronous handle and on SQLite (synchronous=FULL): a queue of
 * `--runs` pending runs spread over `--organisations` organisations, claimed to the end, one
 * claim per transaction. The PostgreSQL claim ranks every waiting run of the kind, so the
 * figure also shows how its cost grows with the queue.
 *
 *   bun scripts/bench/claims.ts [--runs 2000] [--organisations 20]
 *
 * Uses REGKB_TEST_DATABASE_URL (default: scripts/dev-postgres.sh's server) and creates and
 * drops a database of its own.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import type { SqlDatabase } from "../../src/db/sql-database";
import { uuidv7 } from "../../src/ids";
import { claimNextRun, createRun } from "../../src/jobs/store";
import { testServerUrl } from "../../test/helpers/postgres";
import { tempDir } from "../../test/helpers/server";

const { values: args } = parseArgs({ options: { runs: { type: "string", default: "2000" }, organisations: { type: "string", default: "20" } } });
const RUNS = Number(args.runs);
const ORGANISATIONS = Number(args.organisations);

function claimsPerSecond(db: SqlDatabase, label: string): void {
  const kind = `bench_${crypto.randomUUID().slice(0, 8)}`;
  const orgIds = Array.from({ length: ORGANISATIONS }, (_, i) => {
    const id = uuidv7();
    db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, ?, 0, ?)").run(id, `bench ${i}`, Date.now());
    return id;
  });
  db.transaction(() => {
    for (let i = 0; i < RUNS; i++) createRun(db, { id: uuidv7(), orgId: orgIds[i % ORGANISATIONS]!, kind, input: { i }, createdAtMs: i });
  }).immediate();
  const started = performance.now();
  let claimed = 0;
  while (claimNextRun(db, { kind, owner: "bench", nowMs: Date.now(), leaseMs: 600_000 })) claimed++;
  const seconds = (performance.now() - started) / 1000;
  if (claimed !== RUNS) throw new Error(`${label}: claimed ${claimed} of ${RUNS}`);
  console.log(`${label}: ${(RUNS / seconds).toFixed(0)} claims/s (${((seconds * 1e3) / RUNS).toFixed(2)} ms each; ${RUNS} runs, ${ORGANISATIONS} organisations)`);
}

const server = testServerUrl();
const admin = openPostgres({ url: server, poolSize: 1 });
const name = `regkb_bench_${crypto.randomUUID().replaceAll("-", "")}`;
await admin.unsafe(`CREATE DATABASE "${name}"`);
const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
const dataDir = tempDir("regkb-bench-claims-");
try {
  const sql = openPostgres({ url, poolSize: 1 });
  await migratePostgres(sql);
  await sql.close();
  const handle = openPostgresHandle({ url });
  claimsPerSecond(handle, "claims on PostgreSQL through the handle");
  handle.close();
  const sqlite = await openDatabase(dataDir);
  claimsPerSecond(sqlite, "claims on SQLite (synchronous=FULL)");
  sqlite.close();
} finally {
  await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.close();
  rmSync(dataDir, { recursive: true, force: true });
}
