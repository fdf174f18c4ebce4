// A real PostgreSQL for the tests that need one: each test file that calls usePostgres()
// gets a database of its own (random name), created before its tests and dropped after.
// The server comes from REGKB_TEST_DATABASE_URL, by default the one scripts/dev-postgres.sh
// sets up. An unreachable server fails the file with a message naming that script: these
// tests never skip.
import { afterAll, beforeAll } from "bun:test";
import type { SQL } from "bun";
import { openPostgres, redactDatabaseUrl } from "../../src/db/postgres/connect";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle, type PostgresHandle } from "../../src/db/postgres/sync/handle";

/** What scripts/dev-postgres.sh creates (a public test password for a CREATEDB-only role). */
export const DEV_TEST_DATABASE_URL = "postgres://regkb_test:regkb_test_password@127.0.0.1:5432/postgres";

export function testServerUrl(): string {
  const fromEnv = process.env.REGKB_TEST_DATABASE_URL;
  return fromEnv === undefined || fromEnv === "" ? DEV_TEST_DATABASE_URL : fromEnv;
}

export interface TestPostgres {
  /** URL of the file's own database (holds the password: never print it, see redactDatabaseUrl). */
  readonly url: string;
  /** A pool of 4 on the file's database. */
  readonly sql: SQL;
  /** Another empty database on the same server, dropped with the file's; `options`: CREATE DATABASE's own (a locale, say). */
  createDatabase(options?: string): Promise<string>;
  /** A pool of its own on a database of this file, closed after the file. */
  connect(url: string, poolSize: number): SQL;
}

function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

const DROP_TIMEOUT_MS = 60_000;
const DROP_ATTEMPTS = 40;
const DROP_RETRY_MS = 250;

/**
 * FORCE ends the test's own sessions, but not one of a role the test role may not signal
 * (an autovacuum worker that just started on the database): that one ends by itself, so
 * the drop is tried again.
 */
async function dropDatabase(admin: SQL, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (error) {
      if (attempt >= DROP_ATTEMPTS) throw error;
      await Bun.sleep(DROP_RETRY_MS);
    }
  }
}

export function usePostgres(): TestPostgres {
  const server = testServerUrl();
  const admin = openPostgres({ url: server, poolSize: 1 });
  const names: string[] = [];
  const pools: SQL[] = [];
  let own: { url: string; sql: SQL } | undefined;

  const createDatabase = async (options = ""): Promise<string> => {
    const name = `regkb_test_${crypto.randomUUID().replaceAll("-", "")}`;
    await admin.unsafe(`CREATE DATABASE "${name}" ${options}`);
    names.push(name);
    return databaseUrl(server, name);
  };
  const connect = (url: string, poolSize: number): SQL => {
    const sql = openPostgres({ url, poolSize });
    pools.push(sql);
    return sql;
  };

  beforeAll(async () => {
    try {
      await admin`SELECT 1`;
    } catch (error) {
      throw new Error(
        `PostgreSQL is not reachable at ${redactDatabaseUrl(server)} (${(error as Error).message}). ` +
          "Run scripts/dev-postgres.sh once (as root: sudo scripts/dev-postgres.sh), or set " +
          "REGKB_TEST_DATABASE_URL to a server where the role may CREATE DATABASE.",
      );
    }
    const url = await createDatabase();
    own = { url, sql: connect(url, 4) };
  });

  // Each DROP DATABASE checkpoints: a file that made several databases needs more than
  // bun:test's 5 s default on a loaded 2-core machine.
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    for (const name of names) await dropDatabase(admin, name);
    await admin.close();
  }, DROP_TIMEOUT_MS);

  const ready = () => {
    if (own === undefined) throw new Error("usePostgres: the database exists only once beforeAll has run");
    return own;
  };
  return {
    get url() {
      return ready().url;
    },
    get sql() {
      return ready().sql;
    },
    createDatabase,
    connect,
  };
}

/**
 * A synchronous handle on a fresh migrated database whose default collation is the ICU
 * locale `icuLocale` (many customers' databases do not sort in byte order), for the
 * enclosing file; the getter works once beforeAll has run.
 */
export function useCollatedHandle(pg: TestPostgres, icuLocale: string): () => PostgresHandle {
  let db: PostgresHandle | undefined;
  beforeAll(async () => {
    const url = await pg.createDatabase(`TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE '${icuLocale}' LOCALE 'C.UTF-8'`);
    await migratePostgres(pg.connect(url, 1));
    db = openPostgresHandle({ url });
  });
  afterAll(() => db?.close());
  return () => {
    if (db === undefined) throw new Error("useCollatedHandle: the database exists only once beforeAll has run");
    return db;
  };
}
