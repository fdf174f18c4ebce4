// A serving node's system of record: it opens only a PostgreSQL database at exactly this
// binary's schema (a node never migrates on start), and says which command fixes it.
import { expect, test } from "bun:test";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { postgresMigrations } from "../../src/db/postgres/migrations";
import { openPostgresSystemOfRecord, PostgresSchemaMismatch } from "../../src/db/postgres/system-of-record";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();
const TIMEOUT_MS = 5_000;

test("an empty database is refused, naming the migrations it lacks and `regkb migrate`", async () => {
  const empty = await pg.createDatabase();
  const opening = () => openPostgresSystemOfRecord(empty, TIMEOUT_MS);
  expect(opening).toThrow(PostgresSchemaMismatch);
  expect(opening).toThrow(`lacks migrations ${postgresMigrations.map((m) => m.version).join(", ")}: run \`regkb migrate --database-url URL\` once, then start the nodes`);
});

test("a database at this binary's schema opens; one with a migration this binary does not know is refused", async () => {
  await migratePostgres(pg.sql);
  const handle = openPostgresSystemOfRecord(pg.url, TIMEOUT_MS);
  expect(handle.query<{ n: number }, []>("SELECT count(*)::int AS n FROM schema_migrations").get()!.n).toBe(postgresMigrations.length);
  handle.close();
  await pg.sql`INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (999, '999_from_the_future', 0)`;
  expect(() => openPostgresSystemOfRecord(pg.url, TIMEOUT_MS)).toThrow("has schema version 999, newer than this binary knows: upgrade regkb on every node");
});

test("an unreachable server is an error naming it without its password", () => {
  let message = "";
  try {
    openPostgresSystemOfRecord("postgres://regkb:hunter2@127.0.0.1:1/regkb", TIMEOUT_MS);
  } catch (error) {
    message = (error as Error).message;
  }
  expect(message).toContain("postgres://regkb:***@127.0.0.1:1/regkb");
  expect(message).not.toContain("hunter2");
});
