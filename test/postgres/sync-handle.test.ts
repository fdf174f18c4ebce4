// The synchronous PostgreSQL handle (src/db/postgres/sync/) on a real server: bun:sqlite's
// shapes for values, parameters, transactions and errors, and bounded statements.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { openPostgresHandle, PostgresStatementError, type PostgresHandle } from "../../src/db/postgres/sync/handle";
import { toPostgresSql } from "../../src/db/postgres/sync/translate";
import { isUniqueViolation } from "../../src/db/sql-database";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();
let db: PostgresHandle;

beforeAll(() => {
  db = openPostgresHandle({ url: pg.url, statementTimeoutMs: 300 });
  db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, big BIGINT, bytes BYTEA)");
});

afterAll(() => db?.close());

test("parameters: ? in order and ?NNN by number become $n; quotes, quoted names and comments are left alone", () => {
  expect(toPostgresSql(`SELECT ? AS "a?", '?' || ? -- ?\n/* ? */ FROM t WHERE x = ?`)).toBe(
    `SELECT $1 AS "a?", '?' || $2 -- ?\n/* ? */ FROM t WHERE x = $3`,
  );
  expect(toPostgresSql("SELECT ?2, ?1, ?2")).toBe("SELECT $2, $1, $2");
  expect(() => toPostgresSql("SELECT ?, ?1")).toThrow("mixes");
  expect(db.query<{ a: string; b: number }, [string, number]>(`SELECT ? AS a, ? * 2 AS "b"`).get("x", 21)).toEqual({ a: "x", b: 42 });
});

test("values come back as bun:sqlite gives them: integers as numbers, booleans as 1/0, bytea as Uint8Array; beyond 2^53 is an error", () => {
  db.query("INSERT INTO items (id, name, big, bytes) VALUES (?, ?, ?, ?)").run(1, "one", 2 ** 53 - 1, new Uint8Array([0, 1, 255]));
  const row = db.query<Record<string, unknown>, []>(
    `SELECT big, bytes, COUNT(*) OVER () AS n, SUM(big) OVER () AS total, big > 0 AS positive FROM items`,
  ).get();
  expect(row).toEqual({ big: 2 ** 53 - 1, bytes: new Uint8Array([0, 1, 255]), n: 1, total: 2 ** 53 - 1, positive: 1 });
  expect(() => db.query("SELECT big + 2 AS x FROM items").get()).toThrow("beyond 2^53");
  expect(db.query("SELECT name FROM items WHERE id = ?").get(99)).toBeNull();
  expect(db.query("SELECT id, name FROM items").values()).toEqual([[1, "one"]]);
});

test("run() reports rows changed; a unique violation carries SQLSTATE 23505 and SQLite's code", () => {
  expect(db.query("UPDATE items SET name = ? WHERE id > ?").run("renamed", 0).changes).toBe(1);
  let caught: unknown;
  try {
    db.query("INSERT INTO items (id, name) VALUES (?, ?)").run(1, "again");
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(PostgresStatementError);
  expect((caught as PostgresStatementError).sqlState).toBe("23505");
  expect(isUniqueViolation(caught)).toBe(true);
});

test("transactions: commit, roll back on throw, nested ones are savepoints; inTransaction as bun:sqlite", () => {
  const insert = (id: number) => db.query("INSERT INTO items (id, name) VALUES (?, 'tx')").run(id);
  db.transaction(() => {
    expect(db.inTransaction).toBe(true);
    insert(10);
    expect(() =>
      db.transaction(() => {
        insert(11);
        throw new Error("inner");
      })(),
    ).toThrow("inner");
    insert(12);
  }).immediate();
  expect(db.inTransaction).toBe(false);
  expect(() =>
    db.transaction(() => {
      insert(13);
      throw new Error("outer");
    }).immediate(),
  ).toThrow("outer");
  expect(db.query<{ id: number }, []>("SELECT id FROM items WHERE name = 'tx' ORDER BY id").all()).toEqual([{ id: 10 }, { id: 12 }]);
});

test("a statement beyond the statement timeout is cancelled by the server, and the handle goes on working", () => {
  const started = performance.now();
  expect(() => db.query("SELECT pg_sleep(5)").get()).toThrow("statement timeout");
  expect(performance.now() - started).toBeLessThan(4_000);
  expect(db.query("SELECT 1 AS ok").get()).toEqual({ ok: 1 });
});

test("a connection lost inside a transaction: its later statements fail, the transaction ends, and the next one runs on a new connection", () => {
  const killer = openPostgresHandle({ url: pg.url });
  try {
    const attempt = () =>
      db.transaction(() => {
        db.query("INSERT INTO items (id, name) VALUES (20, 'lost')").run();
        const { pid } = db.query<{ pid: number }, []>("SELECT pg_backend_pid() AS pid").get()!;
        killer.query("SELECT pg_terminate_backend(?) AS done").get(pid);
        expect(() => db.query("SELECT 1 AS x").get()).toThrow(PostgresStatementError);
        // The transaction is gone with its connection: nothing may run as if it were still open.
        db.query("INSERT INTO items (id, name) VALUES (21, 'after')").run();
      }).immediate();
    expect(attempt).toThrow("lost inside this transaction");
    expect(db.inTransaction).toBe(false);
    expect(db.query<{ n: number }, []>("SELECT COUNT(*) AS n FROM items WHERE id IN (20, 21)").get()).toEqual({ n: 0 });
  } finally {
    killer.close();
  }
});

test("a worker that stops answering: the caller gives up after the statement timeout plus the margin, never hangs", () => {
  const stalled = openPostgresHandle({
    url: pg.url,
    statementTimeoutMs: 100,
    waitMarginMs: 200,
    workerUrl: new URL("./stalling-worker.ts", import.meta.url).href,
  });
  try {
    const started = performance.now();
    expect(() => stalled.query("SELECT 1 AS x").get()).toThrow("did not answer within 300 ms");
    expect(performance.now() - started).toBeLessThan(2_000);
  } finally {
    stalled.close();
  }
});
