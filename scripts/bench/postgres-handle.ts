/**
 * The synchronous PostgreSQL handle against its alternatives, in one process:
 * - a trivial statement's round trip through the handle, through Bun.sql awaited one at a
 *   time, and on bun:sqlite;
 * - ledger.charge() per second, one process, on the handle (BEGIN with the organisation's
 *   totals FOR UPDATE; replay check; totals; INSERT; totals; COMMIT: 6 trips to the worker),
 *   again without waiting for the commit's WAL flush (what the trips alone cost), and on
 *   SQLite (synchronous=FULL).
 *
 *   bun scripts/bench/postgres-handle.ts [--statements 5000] [--charges 2000]
 *
 * Uses REGKB_TEST_DATABASE_URL (default: scripts/dev-postgres.sh's server) and creates and
 * drops a database of its own.
 */
import { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import type { SqlDatabase } from "../../src/db/sql-database";
import { testServerUrl } from "../../test/helpers/postgres";
import { tempDir } from "../../test/helpers/server";
import { chargeRepeatedly, fundedOrganisation } from "./charges";

const { values: args } = parseArgs({ options: { statements: { type: "string", default: "5000" }, charges: { type: "string", default: "2000" } } });
const STATEMENTS = Number(args.statements);
const CHARGES = Number(args.charges);

function microseconds(startMs: number, n: number): string {
  return (((performance.now() - startMs) * 1000) / n).toFixed(1);
}

function chargesPerSecond(db: SqlDatabase, label: string): void {
  const orgId = fundedOrganisation(db, label);
  const started = performance.now();
  chargeRepeatedly(db, orgId, orgId, { count: CHARGES, untilMs: Infinity });
  const seconds = (performance.now() - started) / 1000;
  console.log(`${label}: ${(CHARGES / seconds).toFixed(0)} charges/s (${((seconds * 1e6) / CHARGES).toFixed(0)} µs each)`);
}

const server = testServerUrl();
const admin = openPostgres({ url: server, poolSize: 1 });
const name = `regkb_bench_${crypto.randomUUID().replaceAll("-", "")}`;
await admin.unsafe(`CREATE DATABASE "${name}"`);
const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
const dataDir = tempDir("regkb-bench-handle-");
try {
  const sql = openPostgres({ url, poolSize: 1 });
  await migratePostgres(sql);
  const handle = openPostgresHandle({ url });
  const trivial = handle.query("SELECT ? AS x");
  trivial.get(0);
  let t = performance.now();
  for (let i = 0; i < STATEMENTS; i++) trivial.get(i);
  console.log(`round trip, handle: ${microseconds(t, STATEMENTS)} µs`);
  t = performance.now();
  for (let i = 0; i < STATEMENTS; i++) await sql.unsafe("SELECT $1 AS x", [i]);
  console.log(`round trip, Bun.sql awaited: ${microseconds(t, STATEMENTS)} µs`);
  const memory = new Database(":memory:");
  const local = memory.query("SELECT ? AS x");
  t = performance.now();
  for (let i = 0; i < STATEMENTS * 10; i++) local.get(i);
  console.log(`statement, bun:sqlite: ${microseconds(t, STATEMENTS * 10)} µs`);

  chargesPerSecond(handle, "ledger.charge on PostgreSQL through the handle");
  // What the round trips alone cost: the commit's WAL flush left out (never for production).
  handle.exec("SET synchronous_commit = off");
  chargesPerSecond(handle, "ledger.charge on PostgreSQL through the handle, synchronous_commit off");
  const sqlite = await openDatabase(dataDir);
  chargesPerSecond(sqlite, "ledger.charge on SQLite (synchronous=FULL)");
  sqlite.close();
  handle.close();
  await sql.close();
} finally {
  await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.close();
  rmSync(dataDir, { recursive: true, force: true });
}
