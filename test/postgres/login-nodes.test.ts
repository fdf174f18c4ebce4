// Two nodes taking sign-in attempts on the same addresses at once on one PostgreSQL database:
// real child processes (login-node.ts), each with its own synchronous handle. Reservations take
// turns on the attempts' lock, so together they let exactly the per-email limit through, as on
// SQLite (without the lock, both count the same rows and both insert).
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { LOGIN_FAILURES_PER_EMAIL_MAX } from "../../src/dashboard/login-limit";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "login-node.ts");
const EMAILS = 40;
const ATTEMPTS_PER_NODE = 8;

describe("sign-in attempts reserved from two nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  beforeAll(() => {
    pg = engine();
  });

  test(`${EMAILS} addresses, ${ATTEMPTS_PER_NODE} attempts on each from each of two nodes: exactly ${LOGIN_FAILURES_PER_EMAIL_MAX} let through per address`, async () => {
    const nodes = await startNodes(NODE_SCRIPT, [0, 1].map((node) => [pg.url!, String(node), String(EMAILS), String(ATTEMPTS_PER_NODE)]));
    for (const node of nodes) tell(node, "go");
    const allowed = await Promise.all(nodes.map(async (node) => JSON.parse(await nextLine(node, "result")) as number[]));
    for (const node of nodes) expect(await node.proc.exited).toBe(0);
    const perEmail = Array.from({ length: EMAILS }, (_, e) => allowed[0]![e]! + allowed[1]![e]!);
    expect(perEmail).toEqual(Array(EMAILS).fill(LOGIN_FAILURES_PER_EMAIL_MAX));
    const rows = pg.db.query<{ n: number }, []>("SELECT count(*) AS n FROM login_attempts WHERE subject LIKE 'email:%'").get()!.n;
    expect(rows).toBe(EMAILS * LOGIN_FAILURES_PER_EMAIL_MAX);
  }, 120_000);
});
