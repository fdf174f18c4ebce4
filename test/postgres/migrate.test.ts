// PostgreSQL migrations on a real server: they apply on a fresh database, a second run
// applies nothing, processes migrating at once apply each version once, a newer database
// is refused, and the numbers match SQLite's.
import { expect, test } from "bun:test";
import { migrations as sqliteMigrations } from "../../src/db/migrations";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { postgresMigrations } from "../../src/db/postgres/migrations";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();
const ALL = postgresMigrations.map((m) => m.version);

/** The system of record: every table SQLite has for it, and PostgreSQL's own additions. */
const TABLES = [
  "api_keys", "credit_balances", "dashboard_sessions", "document_files", "documents", "idempotency_keys",
  "jurisdictions", "ledger_entries", "login_attempts", "organisation_jurisdictions", "organisations",
  "passage_changes", "run_turns", "runs", "schema_migrations", "search_chunk_vectors", "search_chunks",
  "search_index_meta", "stripe_events", "top_up_orders", "users",
];

test("the migrations are numbered and named as SQLite's, version for version", () => {
  expect(postgresMigrations.map((m) => [m.version, m.name])).toEqual(sqliteMigrations.map((m) => [m.version, m.name]));
});

test("on a fresh database every migration applies, once; a second run applies nothing", async () => {
  expect(await migratePostgres(pg.sql)).toEqual(ALL);
  expect(await migratePostgres(pg.sql)).toEqual([]);
  const tables = await pg.sql`SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`;
  expect(tables.map((r: { table_name: string }) => r.table_name)).toEqual(TABLES);
  const recorded = await pg.sql`SELECT version, name FROM schema_migrations ORDER BY version`;
  expect(recorded.map((r: { version: number; name: string }) => [r.version, r.name])).toEqual(postgresMigrations.map((m) => [m.version, m.name]));
});

test("two processes migrating one database at once apply each version exactly once", async () => {
  const url = await pg.createDatabase();
  const [a, b] = [pg.connect(url, 2), pg.connect(url, 2)];
  const [ranA, ranB] = await Promise.all([migratePostgres(a), migratePostgres(b)]);
  expect([...ranA, ...ranB].sort((x, y) => x - y)).toEqual(ALL);
  const [{ rows, versions }] = await a`SELECT count(*)::int AS rows, count(DISTINCT version)::int AS versions FROM schema_migrations`;
  expect({ rows, versions }).toEqual({ rows: ALL.length, versions: ALL.length });
});

test("a database newer than the binary is refused and left as it is", async () => {
  const url = await pg.createDatabase();
  const sql = pg.connect(url, 1);
  await migratePostgres(sql);
  await sql`INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (99, '099_future', 0)`;
  const next = postgresMigrations.at(-1)!.version + 1;
  const withNext = [...postgresMigrations, { version: next, name: "next", sql: "CREATE TABLE next_thing (id TEXT)" }];
  await expect(migratePostgres(sql, withNext)).rejects.toThrow(`database schema version 99 is newer than this binary knows (${next}); upgrade regkb`);
  const [{ exists }] = await sql`SELECT to_regclass('next_thing') IS NOT NULL AS exists`;
  expect(exists).toBe(false);
});

test("a migration that fails leaves its version unapplied and the ones before it applied", async () => {
  const url = await pg.createDatabase();
  const sql = pg.connect(url, 1);
  const newestLanded = postgresMigrations.at(-1)!.version;
  const broken = [...postgresMigrations, { version: newestLanded + 1, name: "broken", sql: "CREATE TABLE half (id TEXT); SELECT 1/0;" }];
  await expect(migratePostgres(sql, broken)).rejects.toThrow("division by zero");
  const [{ newest }] = await sql`SELECT max(version)::int AS newest FROM schema_migrations`;
  expect(newest).toBe(newestLanded);
  const [{ exists }] = await sql`SELECT to_regclass('half') IS NOT NULL AS exists`;
  expect(exists).toBe(false);
});
