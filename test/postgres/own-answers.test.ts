// Every statement through our PostgreSQL connections gets its own answer. With prepared
// statements on (Bun's default), Bun's Postgres driver has delivered one query's rows to
// another query on the same connection (oven-sh/bun#33665, fixed upstream by #33627) and
// returned the wrong cached statement (oven-sh/bun#30494); openPostgres turns them off for
// pools, which run statements concurrently. The pool tests drive the interleavings that
// exposed those bugs, on pools of 1 and 2 as openPostgres builds them; the guard checks no
// named statement is left on the server (the bugs' precondition); the node test runs the
// stores through synchronous handles (one statement at a time, prepared) in several
// processes contending for the same rows. Bun 1.4.5 answers these interleavings right even
// with prepared statements on: the guard is what fails if they are turned back on for pools.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { SQL } from "bun";
import { insertOrganisation } from "../../src/auth/store";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle, type PostgresHandle } from "../../src/db/postgres/sync/handle";
import { uuidv7 } from "../../src/ids";
import { nextLine, startNodes, tell } from "../helpers/node-processes";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();

/** Bursts per pool: each fires every shape below at once (Bun 1.3.14 got half of such SELECTs wrong). */
const BURSTS = 300;
/** A wedged connection leaves a query unsettled forever: a burst taking this long counts as wrong. */
const BURST_TIMEOUT_MS = 10_000;
const BULK_ROWS = 2_000;

/** A query in flight and what its own answer looks like. */
interface Asked {
  label: string;
  answer: Promise<unknown>;
  isOwn(answer: unknown): boolean;
}

type Row = Record<string, unknown>;
const rows = (answer: unknown) => answer as Row[];

/** Bun's reproduction: a prepared text, a new text, the prepared text again, all in flight together. */
function preparedAroundNew(sql: SQL, n: number): Asked[] {
  return [
    { label: "prepared A", answer: sql`SELECT ${`a${n}`}::text AS v`, isOwn: (a) => rows(a)[0]?.v === `a${n}` },
    { label: "new B", answer: sql.unsafe(`SELECT $1::text AS v, $2::int AS w, ${n} AS burst`, [`b${n}`, n]), isOwn: (a) => rows(a)[0]?.v === `b${n}` && rows(a)[0]?.w === n && rows(a)[0]?.burst === n },
    { label: "prepared C", answer: sql`SELECT ${`c${n}`}::text AS v`, isOwn: (a) => rows(a)[0]?.v === `c${n}` },
  ];
}

/** keeper.sh#584's shape: new texts (set_config) between prepared ones, through unsafe(text, params). */
function newBetweenPrepared(sql: SQL, n: number): Asked[] {
  const setting = (value: string): Asked => ({
    label: "set_config",
    answer: sql.unsafe(`SELECT set_config('regkb.own_answers_${n % 97}', $1, false) AS set_to`, [value]),
    isOwn: (a) => rows(a)[0]?.set_to === value,
  });
  const range: Asked = {
    label: "prepared range",
    answer: sql.unsafe("SELECT $1::text AS future_range, $2::text AS past_range", [`P${n}Y`, `P${n}M`]),
    isOwn: (a) => rows(a)[0]?.future_range === `P${n}Y` && rows(a)[0]?.past_range === `P${n}M`,
  };
  return [setting(`${n}ms`), range, setting(`${n}s`)];
}

/** Statements alike for their first 100 characters, differing in the length of an IN list. */
function inListTails(sql: SQL, n: number): Asked[] {
  return [1, 4, 2, 7].map((length) => {
    const ids = Array.from({ length }, (_, i) => 1 + ((n + i) % 20));
    const text = `SELECT g AS the_series_value_that_was_asked_for_by_this_statement FROM generate_series(1, 20) AS g WHERE g IN (${ids.map((_, i) => `$${i + 1}`).join(", ")}) ORDER BY g`;
    const expected = [...new Set(ids)].sort((a, b) => a - b);
    return {
      label: `IN list of ${length}`,
      answer: sql.unsafe(text, ids),
      isOwn: (a) => JSON.stringify(rows(a).map((r) => r.the_series_value_that_was_asked_for_by_this_statement)) === JSON.stringify(expected),
    };
  });
}

/** A refused statement, a long result and positional values among the others. */
function otherResults(sql: SQL, n: number): Asked[] {
  return [
    {
      label: "division by zero",
      answer: sql.unsafe("SELECT $1::int / 0 AS never", [n]).then(() => "answered", (error: Error) => error.message),
      isOwn: (a) => a === "division by zero",
    },
    {
      label: "bulk",
      answer: sql.unsafe(`SELECT g AS bulk_g, $1::text AS bulk_tag FROM generate_series(1, ${BULK_ROWS}) AS g`, [`k${n}`]),
      isOwn: (a) => rows(a).length === BULK_ROWS && rows(a)[BULK_ROWS - 1]?.bulk_g === BULK_ROWS && rows(a)[0]?.bulk_tag === `k${n}`,
    },
    {
      label: "values",
      answer: sql.unsafe("SELECT $1::bigint * 2 AS twice, $2::bool AS even, $3::text AS nothing", [n, n % 2 === 0, n % 3 === 0 ? null : "x"]).values(),
      isOwn: (a) => {
        const [row] = a as unknown[][];
        return Number(row?.[0]) === 2 * n && row?.[1] === (n % 2 === 0) && row?.[2] === (n % 3 === 0 ? null : "x");
      },
    },
    { label: "empty", answer: sql.unsafe("SELECT 1 AS one WHERE $1::int < 0", [n]), isOwn: (a) => rows(a).length === 0 },
  ];
}

function burst(sql: SQL, n: number): Asked[] {
  return [...preparedAroundNew(sql, n), ...otherResults(sql, n), ...newBetweenPrepared(sql, n), ...inListTails(sql, n), ...preparedAroundNew(sql, n + BURSTS)];
}

/** The labels of the queries in one burst whose answer was not their own. */
async function wrongAnswers(asked: Asked[]): Promise<string[]> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), BURST_TIMEOUT_MS)));
  const settled = await Promise.race([Promise.allSettled(asked.map((q) => q.answer)), hung]);
  clearTimeout(timer);
  if (settled === null) return [`a query did not settle within ${BURST_TIMEOUT_MS} ms`];
  return asked.filter((q, i) => settled[i]!.status !== "fulfilled" || !q.isOwn((settled[i] as PromiseFulfilledResult<unknown>).value)).map((q) => q.label);
}

for (const poolSize of [1, 2]) {
  test(`concurrent queries of different shapes on a pool of ${poolSize} each get their own answer`, async () => {
    const sql = pg.connect(pg.url, poolSize);
    await sql`SELECT ${"warm"}::text AS v`;
    const wrong: string[] = [];
    for (let n = 0; n < BURSTS; n++) wrong.push(...(await wrongAnswers(burst(sql, n))));
    expect(wrong).toEqual([]);
  });
}

test("a pool openPostgres opens keeps no named prepared statement on the server", async () => {
  const reserved = await pg.connect(pg.url, 1).reserve();
  try {
    for (let n = 0; n < 3; n++) await wrongAnswers(burst(reserved, n));
    const [{ statements }] = await reserved`SELECT count(*)::int AS statements FROM pg_prepared_statements`;
    expect(statements).toBe(0);
  } finally {
    reserved.release();
  }
});

describe("the stores through synchronous handles", () => {
  let db: PostgresHandle;
  beforeAll(async () => {
    await migratePostgres(pg.sql);
    db = openPostgresHandle({ url: pg.url });
  });
  afterAll(() => db?.close());

  test("handles in three processes contending for two organisations each get their own answers", async () => {
    const orgIds = [uuidv7(), uuidv7()];
    for (const id of orgIds) insertOrganisation(db, { id, name: `org ${id}`, monthlyAllowancePence: 0, createdAtMs: Date.now() });
    const rounds = 150;
    const nodes = await startNodes(join(import.meta.dir, "own-answers-node.ts"), [0, 1, 2].map(() => [pg.url, String(rounds), ...orgIds]));
    for (const node of nodes) tell(node, "go");
    const reports = await Promise.all(nodes.map(async (node) => JSON.parse(await nextLine(node, "report"))));
    await Promise.all(nodes.map((node) => node.proc.exited));
    expect(reports).toEqual(nodes.map(() => ({ checked: rounds, wrong: [] })));
    const [{ runs }] = await pg.sql`SELECT count(*)::int AS runs FROM runs WHERE kind = 'own-answers'`;
    expect(runs).toBe(3 * rounds);
  });
});
