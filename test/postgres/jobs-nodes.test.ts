// Several nodes claiming runs from one PostgreSQL database: real child processes
// (jobs-node.ts), each with its own synchronous handle, using the runs store and the run
// engine as a server does. Every run is claimed once while leases hold, no claim waits for
// another or comes back empty while a run is free, and the runs of a node killed while holding
// leases are taken over once those leases expire and finished exactly once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import { claimNextRun, createRun, leaseUnchanged, listOthersLeases, renewLeases, returnToPending } from "../../src/jobs/store";
import { uuidv7 } from "../../src/ids";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell, type NodeProcess } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "jobs-node.ts");

interface RunRow {
  id: string;
  status: string;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
}

describe("runs claimed by several nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  const started: NodeProcess[] = [];
  beforeAll(() => {
    pg = engine();
    pg.db.exec("CREATE TABLE node_completions (run_id TEXT NOT NULL, outcome TEXT NOT NULL, pid INTEGER NOT NULL, at_ms BIGINT NOT NULL)");
  });
  afterAll(async () => {
    for (const node of started) node.proc.kill("SIGKILL");
    await Promise.all(started.map((node) => node.proc.exited));
  });

  const start = async (argsPerNode: string[][]) => {
    const nodes = await startNodes(NODE_SCRIPT, argsPerNode);
    started.push(...nodes);
    return nodes;
  };

  /** `perOrganisation` runs for each of `organisations` new organisations, interleaved in age; returns their ids. */
  const createRuns = (kind: string, organisations: number, perOrganisation: number): string[] => {
    const orgIds = Array.from({ length: organisations }, (_, i) => pg.createOrganisation(`${kind} ${i}`));
    const ids: string[] = [];
    for (let n = 0; n < perOrganisation; n++) {
      for (const orgId of orgIds) {
        const id = uuidv7();
        createRun(pg.db, { id, orgId, kind, input: { n }, createdAtMs: 1_000 + ids.length });
        ids.push(id);
      }
    }
    return ids;
  };

  const runs = (kind: string) =>
    pg.db.query<RunRow, [string]>("SELECT id, status, attempts, lease_owner, lease_expires_at_ms FROM runs WHERE kind = ? ORDER BY id").all(kind);

  test("4 processes claim 240 runs at once: each run claimed once, by the node that says so; no claim came back empty while a run was free", async () => {
    const kind = "nodes_claim";
    const ids = createRuns(kind, 6, 40);
    const nodes = await start([0, 1, 2, 3].map(() => ["claim", pg.url!, kind, "3"]));
    for (const node of nodes) tell(node, "go");
    const results = await Promise.all(
      nodes.map(async (node) => JSON.parse(await nextLine(node, "its claims")) as { owner: string; claimed: string[]; emptyWhilePending: number }),
    );
    for (const node of nodes) expect(await node.proc.exited).toBe(0);
    expect(results.map((r) => r.emptyWhilePending)).toEqual([0, 0, 0, 0]);
    const claimed = results.flatMap((r) => r.claimed);
    expect(claimed.length).toBe(ids.length);
    expect(new Set(claimed)).toEqual(new Set(ids));
    // More than one node got work: they claimed side by side, not one after the other.
    expect(results.filter((r) => r.claimed.length > 0).length).toBeGreaterThan(1);
    const ownerOf = new Map(results.flatMap((r) => r.claimed.map((id) => [id, r.owner] as const)));
    for (const row of runs(kind)) {
      expect(row).toMatchObject({ status: "running", attempts: 1, lease_owner: ownerOf.get(row.id)! });
    }
  }, 120_000);

  test("a run another node is claiming is skipped at once, not waited for", async () => {
    const kind = "nodes_skip";
    const [first, second] = createRuns(kind, 1, 2) as [string, string];
    const sql = new Bun.SQL(pg.url!);
    const other = await sql.reserve();
    try {
      // Another node's claim in flight: the oldest run locked by a transaction not yet committed.
      await other`BEGIN`;
      await other`SELECT id FROM runs WHERE id = ${first} FOR UPDATE`;
      const run = claimNextRun(pg.db, { kind, owner: "this-node", nowMs: Date.now(), leaseMs: 60_000 });
      expect(run?.id).toBe(second);
      await other`ROLLBACK`;
      expect(claimNextRun(pg.db, { kind, owner: "this-node", nowMs: Date.now(), leaseMs: 60_000 })?.id).toBe(first);
    } finally {
      other.release();
      await sql.close();
    }
  }, 60_000);

  test("a take-over holds the lease it checked until it commits: the owner's renewal cannot slip in between", () => {
    const kind = "nodes_recheck";
    const [id] = createRuns(kind, 1, 1) as [string];
    // The owner is another node: its own handle, which gives up waiting for a lock after 300 ms.
    const owner = openPostgresHandle({ url: pg.url!, statementTimeoutMs: 300 });
    try {
      expect(claimNextRun(owner, { kind, owner: "owner-node", nowMs: 1_000, leaseMs: 1_000 })?.id).toBe(id);
      const expired = listOthersLeases(pg.db, kind, "recovering-node")[0]!;
      const renewals: unknown[] = [];
      const taken = pg.db
        .transaction(() => {
          if (!leaseUnchanged(pg.db, expired)) return false;
          try {
            renewals.push(renewLeases(owner, "owner-node", 90_000));
          } catch (error) {
            renewals.push((error as { sqlState?: string }).sqlState);
          }
          return returnToPending(pg.db, id, expired.leaseOwner, false);
        })
        .immediate();
      expect(taken).toBe(true);
      // The renewal waited for the run's lock and gave up (lock or statement timeout, whichever PostgreSQL
      // noticed first): it did not extend a lease being taken over.
      expect(renewals.length).toBe(1);
      expect(["55P03", "57014"]).toContain(renewals[0] as string);
      expect(renewLeases(owner, "owner-node", 90_000)).toEqual(new Set());
    } finally {
      owner.close();
    }
  });

  test("a node SIGKILLed while holding leases: nobody takes its runs while it renews; after expiry two engines finish them once", async () => {
    const kind = "nodes_takeover";
    const leaseMs = 1_500;
    const ids = createRuns(kind, 2, 6);
    const [holder] = await start([["hold", pg.url!, kind, "6", String(leaseMs)]]);
    tell(holder!, "go");
    const held = JSON.parse(await nextLine(holder!, "its claims")) as { owner: string; claimed: string[] };
    expect(held.claimed.length).toBe(6);

    const engines = await start([0, 1].map(() => ["engine", pg.url!, kind, String(leaseMs)]));
    for (const node of engines) tell(node, "go");
    const completions = () =>
      pg.db.query<{ run_id: string; outcome: string; at_ms: number }, [string]>(
        "SELECT c.run_id, c.outcome, c.at_ms FROM node_completions c JOIN runs r ON r.id = c.run_id WHERE r.kind = ?",
      ).all(kind);
    await until(() => completions().length >= ids.length - held.claimed.length);
    // The holder is alive and renewing: for three lease periods its runs stay its own.
    await Bun.sleep(3 * leaseMs);
    const heldSet = new Set(held.claimed);
    for (const row of runs(kind).filter((r) => heldSet.has(r.id))) {
      expect(row).toMatchObject({ status: "running", attempts: 1, lease_owner: held.owner });
    }
    expect(completions().filter((c) => heldSet.has(c.run_id))).toEqual([]);

    holder!.proc.kill("SIGKILL");
    await holder!.proc.exited;
    const expiresAtMs = Math.max(...runs(kind).filter((r) => heldSet.has(r.id)).map((r) => r.lease_expires_at_ms!));
    await until(() => completions().length >= ids.length);
    await Bun.sleep(2 * leaseMs); // time enough for a second completion, should one happen
    const done = completions();
    expect(done.map((c) => c.run_id).sort()).toEqual([...ids].sort());
    expect(done.every((c) => c.outcome === "completed")).toBe(true);
    for (const c of done.filter((c) => heldSet.has(c.run_id))) expect(c.at_ms).toBeGreaterThanOrEqual(expiresAtMs);
    for (const row of runs(kind)) {
      expect(row).toMatchObject({ status: "completed", attempts: heldSet.has(row.id) ? 2 : 1, lease_owner: null });
    }
    for (const node of engines) tell(node, "stop");
    for (const node of engines) expect(await nextLine(node, "stopped")).toBe("stopped");
  }, 120_000);
});

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error("condition not reached in time");
    await Bun.sleep(50);
  }
}
