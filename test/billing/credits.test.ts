import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { ensureDemo } from "../../src/cli/demo";
import { runCli } from "../../src/cli/index";
import { startTestServer, type TestServer } from "../helpers/server";

const FIXED_MS = Date.parse("2025-06-01T12:00:00.000Z");
let server: TestServer;

beforeAll(async () => {
  // A frozen clock: every entry shares one createdAt, so order falls to the id tie-break.
  server = await startTestServer({ background: false, clock: { nowMs: () => FIXED_MS } });
});

afterAll(async () => {
  await server?.stop();
});

/** Runs the real CLI entry in-process (a spawned process pays ~1 s of start-up per command), capturing its output. */
async function cli(args: string[]): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const writeOut = process.stdout.write;
  const writeErr = process.stderr.write;
  process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => err.push(String(chunk)) > 0) as typeof process.stderr.write;
  try {
    const exitCode = await runCli([...args, "--data-dir", server.dataDir], { REGKB_LOG_LEVEL: "silent" });
    return { exitCode, stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = writeOut;
    process.stderr.write = writeErr;
  }
}

function lastJson(stdout: string): any {
  return JSON.parse(stdout.trim().split("\n").at(-1)!);
}

describe("GET /v1/credits and /v1/credits/ledger", () => {
  test("balance, then entries newest first with ties broken by id, paginated within bounds", async () => {
    const org = server.createOrg({ balancePence: 300 });
    for (let i = 0; i < 4; i++) topUp(server.deps.db, { orgId: org.orgId, amountPence: 10 + i, key: ledgerKeys.operatorTopUp(org.orgId, `ordering-${i}`), description: `T${i}`, nowMs: FIXED_MS });
    const balance = await server.api("/v1/credits", { key: org.key });
    expect(balance.body).toEqual({ balancePence: 346, heldPence: 0, availablePence: 346, currency: "GBP" });

    const all = (await server.api("/v1/credits/ledger", { key: org.key })).body.entries;
    expect(all).toHaveLength(5);
    const ids = all.map((e: any) => e.id);
    expect(ids).toEqual([...ids].sort().reverse());
    expect(all[0]).toEqual({ id: ids[0], type: "top_up", amountPence: 13, currency: "GBP", description: "T3", createdAt: "2025-06-01T12:00:00.000Z" });
    expect(all.at(-1).description).toBe("Top-up recorded by an operator (reference test-initial-credit)");

    const page = (await server.api("/v1/credits/ledger?limit=2&offset=1", { key: org.key })).body.entries;
    expect(page.map((e: any) => e.id)).toEqual(ids.slice(1, 3));
    for (const query of ["limit=0", "limit=201", "offset=-1", "offset=1000001", "limit=abc", "limit=1.5"]) {
      const response = await server.api(`/v1/credits/ledger?${query}`, { key: org.key });
      expect(response.status).toBe(400);
      expect(response.body.error).toBe("validation_failed");
    }
    expect((await server.api("/v1/credits/ledger?limit=200", { key: org.key })).status).toBe(200);
    // Another organisation sees only its own entries.
    const other = server.createOrg();
    expect((await server.api("/v1/credits/ledger", { key: other.key })).body.entries).toEqual([]);
    expect((await server.api("/v1/credits")).status).toBe(401);
  });
});

describe("regkb credits", () => {
  test("top-up (idempotent by reference), adjust, show, verify", async () => {
    const org = server.createOrg();
    const first = await cli(["credits", "top-up", "--org", org.orgId, "--amount-pence", "2500", "--reference", "INV-7", "--json"]);
    expect(first.exitCode).toBe(0);
    const entry = lastJson(first.stdout);
    expect(entry).toMatchObject({ type: "top_up", amountPence: 2500, created: true, availablePence: 2500 });
    expect(entry.description).toContain("recorded by an operator");
    const again = lastJson((await cli(["credits", "top-up", "--org", org.orgId, "--amount-pence", "2500", "--reference", "INV-7", "--json"])).stdout);
    expect(again).toMatchObject({ id: entry.id, created: false });
    expect((await cli(["credits", "top-up", "--org", org.orgId, "--amount-pence", "2600", "--reference", "INV-7"])).exitCode).toBe(1);

    const adjusted = await cli(["credits", "adjust", "--org", org.orgId, "--amount-pence", "-500", "--reason", "duplicate transfer", "--json"]);
    expect(lastJson(adjusted.stdout)).toMatchObject({ type: "adjustment", amountPence: -500, description: "Operator adjustment: duplicate transfer" });
    expect((await cli(["credits", "adjust", "--org", org.orgId, "--amount-pence", "-5000", "--reason", "too much"])).exitCode).toBe(1);
    expect((await cli(["credits", "adjust", "--org", org.orgId, "--amount-pence", "5"])).exitCode).toBe(1);

    const shown = lastJson((await cli(["credits", "show", "--org", org.orgId, "--json"])).stdout);
    expect(shown).toMatchObject({ orgId: org.orgId, balancePence: 2000, heldPence: 0, availablePence: 2000, currency: "GBP" });
    expect(shown.entries).toHaveLength(2);

    const verified = await cli(["credits", "verify", "--json"]);
    expect(verified.exitCode).toBe(0);
    expect(lastJson(verified.stdout).ok).toBe(true);

    // Running totals edited behind the ledger's back: verify notices and fails.
    server.deps.db.query("UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ?").run(org.orgId);
    const broken = await cli(["credits", "verify"]);
    expect(broken.exitCode).toBe(1);
    expect(broken.stderr).toContain(org.orgId);
    server.deps.db.query("UPDATE credit_balances SET balance_pence = balance_pence - 1 WHERE org_id = ?").run(org.orgId);
    expect((await cli(["credits", "verify"])).exitCode).toBe(0);
  });

  test("the demo organisation gets 1000 pence once", async () => {
    const first = await ensureDemo(server.deps);
    const second = await ensureDemo(server.deps);
    expect(first.availablePence).toBe(1000);
    expect(second).toMatchObject({ orgId: first.orgId, availablePence: 1000 });
  });
});
