// The PostgreSQL connection settings: the URL alone decides where data goes, its password
// never shows, and a malformed URL stops the binary without repeating it.
import { afterEach, expect, test } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config";
import { openPostgres, redactDatabaseUrl } from "../../src/db/postgres/connect";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();
const saved = { PGDATABASE: process.env.PGDATABASE, PGSSLMODE: process.env.PGSSLMODE };

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

test("redactDatabaseUrl hides the password and keeps the rest", () => {
  expect(redactDatabaseUrl("postgres://app:s3cr%40t@db.internal:6432/regkb?sslmode=require")).toBe(
    "postgres://app:***@db.internal:6432/regkb?sslmode=require",
  );
  expect(redactDatabaseUrl("postgres://app@db.internal/regkb")).toBe("postgres://app@db.internal/regkb");
  expect(redactDatabaseUrl("not a url s3cret")).toBe("(a malformed database URL)");
});

test("the URL's database and TLS mode win over PGDATABASE and PGSSLMODE in the environment", async () => {
  process.env.PGDATABASE = "some_other_database";
  process.env.PGSSLMODE = "require";
  const sql = openPostgres({ url: pg.url, poolSize: 1 });
  try {
    const [{ name }] = await sql`SELECT current_database() AS name`;
    expect(name).toBe(new URL(pg.url).pathname.slice(1));
  } finally {
    await sql.close();
  }
});

test("the pool opens at most poolSize connections", async () => {
  const sql = openPostgres({ url: pg.url, poolSize: 3 });
  try {
    const pids = await Promise.all(Array.from({ length: 12 }, () => sql`SELECT pg_backend_pid() AS pid, pg_sleep(0.05)`));
    expect(new Set(pids.map(([row]) => row.pid)).size).toBeLessThanOrEqual(3);
  } finally {
    await sql.close();
  }
});

test("REGKB_DATABASE_URL: a postgres URL is taken, the flag wins, anything else is refused without being repeated", () => {
  expect(loadConfig({}).databaseUrl).toBeUndefined();
  expect(loadConfig({ REGKB_DATABASE_URL: "postgresql://a:b@h/d" }).databaseUrl).toBe("postgresql://a:b@h/d");
  expect(loadConfig({ REGKB_DATABASE_URL: "postgres://a:b@h/d" }, { databaseUrl: "postgres://c:d@k/e" }).databaseUrl).toBe("postgres://c:d@k/e");
  for (const bad of ["https://user:hunter2@h/d", "postgres://user:hunter2@/d", "postgres://user:hunter2@h/d?sslmode=sometimes", "hunter2"]) {
    expect(() => loadConfig({ REGKB_DATABASE_URL: bad }), bad).toThrow(ConfigError);
    try {
      loadConfig({ REGKB_DATABASE_URL: bad });
    } catch (error) {
      expect((error as Error).message).not.toContain("hunter2");
    }
  }
});

test("with a database URL an upload must fit one PostgreSQL bytea (at most 2^30 − 1 bytes); without one, 1 GiB is allowed", () => {
  const gib = String(1024 * 1024 * 1024);
  expect(loadConfig({ REGKB_MAX_UPLOAD_BYTES: gib }).maxUploadBytes).toBe(1024 * 1024 * 1024);
  expect(() => loadConfig({ REGKB_MAX_UPLOAD_BYTES: gib, REGKB_DATABASE_URL: "postgres://a:b@h/d" })).toThrow(
    "REGKB_MAX_UPLOAD_BYTES must be an integer from 1024 to 1073741823",
  );
  expect(loadConfig({ REGKB_MAX_UPLOAD_BYTES: String(1024 * 1024 * 1024 - 1), REGKB_DATABASE_URL: "postgres://a:b@h/d" }).maxUploadBytes).toBe(1024 * 1024 * 1024 - 1);
  expect(loadConfig({ REGKB_DATABASE_STATEMENT_TIMEOUT_MS: "250" }).databaseStatementTimeoutMs).toBe(250);
  expect(() => loadConfig({ REGKB_DATABASE_STATEMENT_TIMEOUT_MS: "50" })).toThrow(ConfigError);
});
