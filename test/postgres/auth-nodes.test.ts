// Two nodes replacing one organisation's jurisdictions at once on one PostgreSQL database:
// real child processes (auth-node.ts), each with its own synchronous handle. They take turns
// on the organisation's row, so every replacement succeeds and the last one stands whole, as
// on SQLite (without the lock, both delete the old set and the second insert is a 23505).
import { beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { listEnabledJurisdictions, upsertJurisdiction } from "../../src/auth/store";
import { useEngine, type TestEngine } from "../helpers/engines";
import { nextLine, startNodes, tell } from "../helpers/node-processes";

const NODE_SCRIPT = join(import.meta.dir, "auth-node.ts");

describe("organisations' jurisdictions replaced from two nodes on one PostgreSQL database", () => {
  const engine = useEngine("postgres");
  let pg: TestEngine;
  beforeAll(() => {
    pg = engine();
  });

  test("200 replacements from each of two nodes at once: all succeed, one whole set remains", async () => {
    upsertJurisdiction(pg.db, { slug: "node-a", name: "A", description: "a" });
    upsertJurisdiction(pg.db, { slug: "node-b", name: "B", description: "b" });
    const orgId = pg.createOrganisation("Jurisdictions from two nodes");
    const nodes = await startNodes(NODE_SCRIPT, [0, 1].map(() => [pg.url!, orgId, "200", "node-a", "node-b"]));
    for (const node of nodes) tell(node, "go");
    for (const node of nodes) expect(await nextLine(node, "done")).toBe("done");
    for (const node of nodes) expect(await node.proc.exited).toBe(0);
    const slugs = listEnabledJurisdictions(pg.db, orgId).map((j) => j.slug);
    expect([["node-a"], ["node-a", "node-b"]]).toContainEqual(slugs);
  }, 120_000);
});
