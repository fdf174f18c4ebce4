// Which failures make the synchronous handle's worker drop its connection: the real errors
// Bun's driver raises here, and the shape of a driver-side failure (a message it could not
// read), which no statement can provoke on purpose.
import { expect, test } from "bun:test";
import { connectionUnusable, sqlStateOf } from "../../src/db/postgres/sync/protocol";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();

async function errorOf(statement: Promise<unknown>): Promise<{ errno?: unknown; code?: unknown }> {
  try {
    await statement;
  } catch (error) {
    return error as { errno?: unknown; code?: unknown };
  }
  throw new Error("the statement did not fail");
}

test("a statement the server refuses keeps the connection; a broken protocol or session drops it", async () => {
  const sql = pg.connect(pg.url, 1);
  await sql`CREATE TABLE IF NOT EXISTS unusable_probe (id int PRIMARY KEY)`;
  await sql`INSERT INTO unusable_probe VALUES (1) ON CONFLICT DO NOTHING`;
  const duplicate = await errorOf(sql.unsafe("INSERT INTO unusable_probe VALUES ($1)", [1]));
  expect(sqlStateOf(duplicate)).toBe("23505");
  expect(connectionUnusable(duplicate)).toBe(false);
  const division = await errorOf(sql.unsafe("SELECT $1::int / 0", [1]));
  expect(connectionUnusable(division)).toBe(false);
  // Too few parameters for the statement: a protocol violation (08P01).
  const protocol = await errorOf(sql.unsafe("SELECT $1::text, $2::text", ["a"]));
  expect(sqlStateOf(protocol)).toBe("08P01");
  expect(connectionUnusable(protocol)).toBe(true);
  const [{ pid }] = await sql`SELECT pg_backend_pid() AS pid`;
  const ended = errorOf(sql`SELECT pg_sleep(5)`);
  await Bun.sleep(200);
  await pg.sql`SELECT pg_terminate_backend(${pid})`;
  expect(connectionUnusable(await ended)).toBe(true);
});

test("a failure of the driver itself (no SQLSTATE) drops the connection; one of ours does not", () => {
  expect(connectionUnusable({ code: "ERR_POSTGRES_INVALID_MESSAGE" })).toBe(true);
  expect(connectionUnusable({ code: "ERR_POSTGRES_UNSUPPORTED_INTEGER_SIZE" })).toBe(true);
  expect(connectionUnusable({ code: "ERR_POSTGRES_CONNECTION_CLOSED" })).toBe(true);
  expect(connectionUnusable({ message: "integer 9007199254740993 is beyond 2^53" } as { code?: unknown })).toBe(false);
  expect(connectionUnusable({ code: "ERR_INVALID_ARG_TYPE" })).toBe(false);
});
