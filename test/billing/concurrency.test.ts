import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { tempDir } from "../helpers/server";
import { startPaidChild, type Child } from "./child-process";
import { createPaidOrg, postPaid, startPaidServer, type PaidServer } from "./paid-app";

// 50 paid requests (2p each) against 40p of credit: exactly 20 may succeed. The same race
// through direct ledger calls, on both engines: ledger-engines.test.ts.
const REQUESTS = 50;
const CREDIT_PENCE = 40;
const AFFORDABLE = 20;

let dataDir: string;
let server: PaidServer;
let child: Child;

beforeAll(async () => {
  dataDir = tempDir("regkb-billing-concurrency-");
  server = await startPaidServer(dataDir);
  child = await startPaidChild(dataDir);
});

afterAll(async () => {
  await child?.stop();
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function tally(statuses: number[]) {
  return { ok: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 402).length };
}

describe("concurrent paid requests against credit for 20", () => {
  test("over HTTP in one process: exactly 20 succeed and 30 get 402 insufficient_credit", async () => {
    const org = createPaidOrg(server.deps, CREDIT_PENCE);
    const responses = await Promise.all(Array.from({ length: REQUESTS }, () => postPaid(server.url, org.key, { query: "q" })));
    expect(tally(responses.map((r) => r.status))).toEqual({ ok: AFFORDABLE, refused: REQUESTS - AFFORDABLE });
    const refusal = responses.find((r) => r.status === 402)!;
    expect(refusal.body).toEqual({ error: "insufficient_credit", details: "available 0 pence, required 2 pence" });
    expect(new Set(responses.filter((r) => r.status === 200).map((r) => r.body.requestId)).size).toBe(AFFORDABLE);
    expect(getBalance(server.deps.db, org.orgId).availablePence).toBe(0);
  });

  test("over HTTP from two processes sharing the database file: exactly 20 succeed", async () => {
    // Warm both processes up first, so neither wins every race just by having compiled its routes.
    const warm = createPaidOrg(server.deps, 1000, "Warm-up org");
    for (let i = 0; i < 20; i++) await Promise.all([postPaid(server.url, warm.key, { query: "w" }), postPaid(child.url, warm.key, { query: "w" })]);
    // The child process charges first (which of the two wins each race is up to the
    // scheduler), so the race below runs against totals both processes have written.
    const CHILD_FIRST = 3;
    const org = createPaidOrg(server.deps, CREDIT_PENCE + 2 * CHILD_FIRST);
    for (let i = 0; i < CHILD_FIRST; i++) expect((await postPaid(child.url, org.key, { query: "c" })).status).toBe(200);
    const responses = await Promise.all(
      Array.from({ length: REQUESTS }, (_, i) => postPaid(i % 2 === 0 ? server.url : child.url, org.key, { query: "q" })),
    );
    expect(tally(responses.map((r) => r.status))).toEqual({ ok: AFFORDABLE, refused: REQUESTS - AFFORDABLE });
    expect(getBalance(server.deps.db, org.orgId).availablePence).toBe(0);
    const settles = server.deps.db
      .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM ledger_entries WHERE org_id = ? AND type = 'settle'")
      .get(org.orgId)!.n;
    expect(settles).toBe(AFFORDABLE + CHILD_FIRST);
    expect(verifyLedger(server.deps.db).ok).toBe(true);
  });
});
