// Two nodes claiming the same Idempotency-Keys at once on one PostgreSQL database: real child
// processes (idempotency-node.ts), each with its own synchronous handle. Whatever the key's
// state (new, released by a failed attempt, or abandoned past its lease), exactly one node
// holds it and the other is told it is held, as on SQLite.
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { systemClock } from "../../src/clock";
import { claimIdempotencyKey, releaseIdempotencyKey } from "../../src/http/idempotency";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "idempotency-node.ts");
const KEYS = 40;

describe("idempotency keys claimed from two nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  beforeAll(() => {
    pg = engine();
  });

  /** Both nodes claim PREFIX-0 … PREFIX-(KEYS-1) at once; returns each key's two outcomes. */
  async function race(orgId: string, prefix: string): Promise<[string, string][]> {
    const nodes = await startNodes(NODE_SCRIPT, [0, 1].map(() => [pg.url!, orgId, prefix, String(KEYS)]));
    for (const node of nodes) tell(node, "go");
    const [a, b] = await Promise.all(nodes.map(async (node) => JSON.parse(await nextLine(node, "its outcomes")) as string[]));
    for (const node of nodes) expect(await node.proc.exited).toBe(0);
    return a!.map((outcome, i) => [outcome, b![i]!]);
  }

  /** Claims every key from this process first: released (a failed attempt) or left to lapse (a crash). */
  async function claimBeforehand(orgId: string, prefix: string, leaseMs: number, release: boolean): Promise<string[]> {
    const deps = { db: pg.db, clock: systemClock };
    const operationIds: string[] = [];
    for (let i = 0; i < KEYS; i++) {
      const outcome = await claimIdempotencyKey(deps, { orgId, key: `${prefix}-${i}`, method: "POST", route: "/v1/search", body: { query: "capital" } }, { leaseMs });
      if (outcome.kind !== "claimed") throw new Error("expected a claim");
      if (release) releaseIdempotencyKey(deps, outcome.claim);
      operationIds.push(outcome.claim.operationId);
    }
    return operationIds;
  }

  const winners = (pairs: [string, string][]) => pairs.map(([a, b]) => (a === "busy" ? b : b === "busy" ? a : `both: ${a} ${b}`));

  test("new keys: one node claims each, the other sees it held", async () => {
    const orgId = pg.createOrganisation("New keys from two nodes");
    const pairs = await race(orgId, "new");
    expect(pairs.filter(([a, b]) => [a, b].filter((o) => o === "busy").length !== 1)).toEqual([]);
    const count = pg.db.query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM idempotency_keys WHERE org_id = ?").get(orgId)!.n;
    expect(count).toBe(KEYS);
  }, 120_000);

  test("released keys: one node claims each, under the operation id of the first attempt", async () => {
    const orgId = pg.createOrganisation("Released keys from two nodes");
    const operationIds = await claimBeforehand(orgId, "released", 60_000, true);
    expect(winners(await race(orgId, "released"))).toEqual(operationIds);
  }, 120_000);

  test("abandoned keys past their lease: one node takes each over, under the operation id of the first attempt", async () => {
    const orgId = pg.createOrganisation("Abandoned keys from two nodes");
    const operationIds = await claimBeforehand(orgId, "abandoned", 1, false);
    await Bun.sleep(5);
    expect(winners(await race(orgId, "abandoned"))).toEqual(operationIds);
  }, 120_000);
});
