// Several nodes' ledgers on one PostgreSQL database: real child processes (ledger-node.ts),
// each with its own synchronous handle, run ledger.ts exactly as a server would. Credit is
// spent to exactly zero without an overdraw, one key charged from two nodes at once is one
// entry, a key race another node wins ends as on SQLite, and `credits verify` passes.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { charge, getBalance, LedgerInvariantError, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { countEntries } from "../../src/billing/store";
import type { SqlDatabase } from "../../src/db/sql-database";
import { runBinary } from "../helpers/binary";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes as startNodeProcesses, tell, type NodeProcess } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "ledger-node.ts");

/** Starts nodes with these arguments and waits until every one is connected and ready. */
const startNodes = (argsPerNode: string[][]) => startNodeProcesses(NODE_SCRIPT, argsPerNode);
const go = (node: NodeProcess) => tell(node, "go");

/** Every node's outcomes, once each has exited cleanly. */
async function outcomes(nodes: NodeProcess[]): Promise<string[][]> {
  const results = await Promise.all(nodes.map(async (node) => JSON.parse(await nextLine(node, "its outcomes")) as string[]));
  for (const node of nodes) expect(await node.proc.exited).toBe(0);
  return results;
}

function ledgerRows(db: SqlDatabase, orgId: string): { n: number; sum: number } {
  return db.query<{ n: number; sum: number }, [string]>("SELECT COUNT(*) AS n, COALESCE(SUM(amount_pence), 0) AS sum FROM ledger_entries WHERE org_id = ?").get(orgId)!;
}

describe("ledger nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  beforeAll(() => {
    pg = engine();
  });

  test("4 processes spend one organisation's credit to exactly zero: no overdraw, entries = accepted charges, credits verify passes", async () => {
    // 4 nodes × 30 charges of 2p against 100p: exactly 50 can be accepted, whoever makes them.
    const orgId = pg.createOrganisation("Spent by four nodes");
    topUp(pg.db, { orgId, amountPence: 100, key: ledgerKeys.operatorTopUp(orgId, "nodes"), description: "credit", nowMs: Date.now() });
    const nodes = await startNodes([0, 1, 2, 3].map((n) => ["spend", pg.url!, orgId, "30", "2", `node-${n}`]));
    for (const node of nodes) go(node);
    const results = await outcomes(nodes);
    const accepted = results.flat().filter((o) => o !== "402");
    expect(accepted.length).toBe(50);
    expect(results.every((r) => r.length === 30)).toBe(true);
    expect(getBalance(pg.db, orgId)).toEqual({ balancePence: 0, heldPence: 0, availablePence: 0, currency: "GBP" });
    expect(ledgerRows(pg.db, orgId)).toEqual({ n: 1 + 50, sum: 0 });
    const verify = runBinary(["credits", "verify", "--database-url", pg.url!]);
    expect(verify.exitCode, verify.stderr).toBe(0);
  }, 120_000);

  test("the same keys charged from two processes at once: one entry per key, both answered with it", async () => {
    const orgId = pg.createOrganisation("Same keys from two nodes");
    topUp(pg.db, { orgId, amountPence: 1_000, key: ledgerKeys.operatorTopUp(orgId, "same"), description: "credit", nowMs: Date.now() });
    const entriesBefore = countEntries(pg.db);
    const nodes = await startNodes([0, 1].map(() => ["spend", pg.url!, orgId, "25", "3", `same-${orgId}`]));
    for (const node of nodes) go(node);
    const [first, second] = await outcomes(nodes);
    expect(first).toEqual(second!);
    expect(new Set(first).size).toBe(25);
    expect(countEntries(pg.db) - entriesBefore).toBe(25);
    expect(getBalance(pg.db, orgId).availablePence).toBe(1_000 - 25 * 3);
  }, 120_000);

  test("a key another node wrote and has not committed yet: waited for, then the same refusal as on SQLite, never a unique-key error", async () => {
    // A key reused for another organisation is a caller's bug; SQLite refuses it as a LedgerInvariantError.
    const holder = pg.createOrganisation("Holds the key");
    const other = pg.createOrganisation("Reuses the key");
    for (const orgId of [holder, other]) {
      topUp(pg.db, { orgId, amountPence: 10, key: ledgerKeys.operatorTopUp(orgId, "race"), description: "credit", nowMs: Date.now() });
    }
    const key = `race-${holder}`;
    const [node] = await startNodes([["hold", pg.url!, holder, key, "700"]]);
    go(node!);
    const [held] = JSON.parse(await nextLine(node!, "its insert")) as string[];
    // The node's entry is inserted and uncommitted: this insert waits on the key's index, then conflicts.
    const attempt = () => charge(pg.db, { orgId: other, amountPence: 1, key: ledgerKeys.search(key), description: "race", nowMs: Date.now() });
    expect(attempt).toThrow(LedgerInvariantError);
    expect(await node!.proc.exited).toBe(0);
    expect(pg.db.query<{ id: string }, [string]>("SELECT id FROM ledger_entries WHERE idempotency_key = ?").get(`search:${key}`)!.id).toBe(held!);
    expect(getBalance(pg.db, other).availablePence).toBe(10);
  }, 60_000);
});
