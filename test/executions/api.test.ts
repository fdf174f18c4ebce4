import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { getBalance, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { uuidv7 } from "../../src/ids";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";
import { TEST_SANDBOX_CACHE_DIR } from "./pool-helper";

let server: TestServer;

beforeAll(async () => {
  // Reuse the Pyodide files and memory snapshot the other sandbox tests made.
  const dataDir = tempDir();
  mkdirSync(TEST_SANDBOX_CACHE_DIR, { recursive: true });
  symlinkSync(TEST_SANDBOX_CACHE_DIR, join(dataDir, "cache"));
  server = await startTestServer({ dataDir, env: { REGKB_SANDBOX_POOL_SIZE: "1", REGKB_EXECUTION_MEMORY_MB: "256" } });
}, 60_000);
afterAll(() => server.stop());

function orgWithCredit(pence: number) {
  const org = server.createOrg();
  if (pence > 0) {
    topUp(server.deps.db, { orgId: org.orgId, amountPence: pence, key: ledgerKeys.operatorTopUp(org.orgId), description: "test credit", nowMs: Date.now() });
  }
  return org;
}

async function waitForDone(key: string, id: string) {
  const deadlineMs = Date.now() + 60_000;
  for (;;) {
    const res = await server.api(`/v1/executions/${id}`, { key });
    if (res.body.status === "completed" || res.body.status === "failed" || Date.now() > deadlineMs) return res;
    await Bun.sleep(50);
  }
}

function runEntries(orgId: string, runId: string) {
  return server.deps.db
    .query("SELECT type, amount_pence AS amountPence FROM ledger_entries WHERE org_id = ? AND ref = ? ORDER BY rowid")
    .all(orgId, runId);
}

describe("POST /v1/executions then GET /v1/executions/{id}", () => {
  test("completed run: output, exit code, settle 5p + started seconds, hold released", async () => {
    const org = orgWithCredit(100);
    const created = await server.api("/v1/executions", { key: org.key, body: { code: "import sys\nprint('hi')\nprint('oops', file=sys.stderr)\nsys.exit(3)", timeoutSeconds: 10 } });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: expect.any(String), status: "pending", estimatedCostPence: 15 });
    const done = await waitForDone(org.key, created.body.id);
    expect(done.body).toEqual({
      id: created.body.id,
      status: "completed",
      exitCode: 3,
      stdout: "hi\n",
      stderr: "oops\n",
      durationMs: expect.any(Number),
      error: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      completedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const costPence = 5 + Math.ceil(done.body.durationMs / 1000);
    expect(runEntries(org.orgId, created.body.id)).toEqual([
      { type: "reserve", amountPence: -15 },
      { type: "release", amountPence: 15 },
      { type: "settle", amountPence: -costPence },
    ]);
    expect(getBalance(server.deps.db, org.orgId)).toMatchObject({ balancePence: 100 - costPence, heldPence: 0 });
  }, 90_000);

  test("a timeout completes with exit code 124 and costs exactly the hold", async () => {
    const org = orgWithCredit(100);
    const created = await server.api("/v1/executions", { key: org.key, body: { code: "print('start', flush=True)\nwhile True: pass", timeoutSeconds: 1 } });
    expect(created.body.estimatedCostPence).toBe(6);
    const done = await waitForDone(org.key, created.body.id);
    expect(done.body).toMatchObject({ status: "completed", exitCode: 124, stdout: "start\n", durationMs: 1000 });
    expect(getBalance(server.deps.db, org.orgId)).toMatchObject({ balancePence: 94, heldPence: 0 });
  }, 90_000);

  test("a run past REGKB_EXECUTION_MEMORY_MB completes with exit code 137 and a MemoryError, charged like any run", async () => {
    const org = orgWithCredit(100);
    const code = `from pyodide.ffi import to_js
print("start", flush=True)
to_js({}).constructor.constructor("const keep = []; for (;;) { const a = new Uint8Array(1 << 24); a.fill(1); keep.push(a); }")()`;
    const created = await server.api("/v1/executions", { key: org.key, body: { code, timeoutSeconds: 30 } });
    const done = await waitForDone(org.key, created.body.id);
    expect(done.body).toMatchObject({ status: "completed", exitCode: 137, stdout: "start\n", error: null });
    expect(done.body.stderr).toContain("MemoryError: the run used more than its 256 MiB of memory and was stopped");
    const costPence = 5 + Math.ceil(done.body.durationMs / 1000);
    expect(getBalance(server.deps.db, org.orgId)).toMatchObject({ balancePence: 100 - costPence, heldPence: 0 });
  }, 90_000);

  test("an Idempotency-Key retried many times at once creates one run and one hold", async () => {
    const org = orgWithCredit(100);
    const headers = { "idempotency-key": `exec-${uuidv7()}` };
    const body = { code: "print(6 * 7)", timeoutSeconds: 5 };
    const replies = await Promise.all(Array.from({ length: 5 }, () => server.api("/v1/executions", { key: org.key, body, headers })));
    const ids = new Set(replies.map((r) => r.body.id));
    expect(replies.every((r) => r.status === 202)).toBe(true);
    expect(ids.size).toBe(1);
    const [id] = [...ids] as string[];
    const done = await waitForDone(org.key, id!);
    expect(done.body.stdout).toBe("42\n");
    expect(runEntries(org.orgId, id!).filter((e: any) => e.type === "reserve")).toHaveLength(1);
    const reused = await server.api("/v1/executions", { key: org.key, body: { ...body, code: "print(1)" }, headers });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toBe("idempotency_key_reused");
  });

  test("402 insufficient_credit before anything is created", async () => {
    const org = orgWithCredit(10);
    const res = await server.api("/v1/executions", { key: org.key, body: { code: "print(1)", timeoutSeconds: 60 } });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: "insufficient_credit", details: "available 10 pence, required 65 pence" });
    expect(getBalance(server.deps.db, org.orgId)).toMatchObject({ balancePence: 10, heldPence: 0 });
  });

  test("validation: code length and timeout bounds", async () => {
    const org = orgWithCredit(1000);
    for (const body of [{}, { code: "x".repeat(65_537) }, { code: "1", timeoutSeconds: 0 }, { code: "1", timeoutSeconds: 301 }, { code: "1", timeoutSeconds: 1.5 }]) {
      const res = await server.api("/v1/executions", { key: org.key, body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("validation_failed");
    }
  });

  test("404 for unknown, malformed and another organisation's id", async () => {
    const owner = orgWithCredit(100);
    const other = orgWithCredit(0);
    const created = await server.api("/v1/executions", { key: owner.key, body: { code: "print(1)", timeoutSeconds: 5 } });
    for (const [key, id] of [[owner.key, uuidv7()], [owner.key, "not-a-uuid"], [other.key, created.body.id]]) {
      const res = await server.api(`/v1/executions/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe("not_found");
    }
    await waitForDone(owner.key, created.body.id);
  }, 90_000);
});

describe("a host that cannot sandbox", () => {
  test("503 sandbox_unavailable with the reason, nothing held", async () => {
    // An empty PATH hides the `unshare` command, which the start-up probe requires.
    const savedPath = process.env.PATH;
    process.env.PATH = "/nonexistent";
    const refusing = await startTestServer().finally(() => (process.env.PATH = savedPath));
    try {
      const org = refusing.createOrg();
      topUp(refusing.deps.db, { orgId: org.orgId, amountPence: 100, key: ledgerKeys.operatorTopUp(org.orgId), description: "test credit", nowMs: Date.now() });
      const res = await refusing.api("/v1/executions", { key: org.key, body: { code: "print(1)" } });
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: "sandbox_unavailable", details: "the util-linux `unshare` command is not installed" });
      expect(getBalance(refusing.deps.db, org.orgId)).toMatchObject({ balancePence: 100, heldPence: 0 });
    } finally {
      await refusing.stop();
    }
  });

  test("without `setpriv` (which makes sandboxes die with the server) executions are refused too", async () => {
    const onlyUnshare = tempDir();
    symlinkSync(Bun.which("unshare")!, join(onlyUnshare, "unshare"));
    const savedPath = process.env.PATH;
    process.env.PATH = onlyUnshare;
    const refusing = await startTestServer().finally(() => (process.env.PATH = savedPath));
    try {
      expect(refusing.deps.sandbox.unavailableReason).toBe("the util-linux `setpriv` command is not installed");
    } finally {
      await refusing.stop();
    }
  });
});
