import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { IN_FLIGHT_LEASE_MS } from "../../src/http/idempotency";
import { tempDir } from "../helpers/server";
import { startPaidChild } from "./child-process";
import { createPaidOrg, postPaid, startPaidServer, type PaidServer } from "./paid-app";

let dataDir: string;
let server: PaidServer;

beforeAll(async () => {
  dataDir = tempDir("regkb-billing-idempotency-");
  server = await startPaidServer(dataDir, { idempotency: { waitMs: 200 } });
});

afterAll(async () => {
  await server?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

function settleCount(orgId: string): number {
  return server.deps.db
    .query<{ n: number }, [string]>("SELECT COUNT(*) AS n FROM ledger_entries WHERE org_id = ? AND type = 'settle'")
    .get(orgId)!.n;
}

describe("Idempotency-Key", () => {
  test("one key sent 20 times at once: one charge, 20 identical responses", async () => {
    const org = createPaidOrg(server.deps, 100);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => postPaid(server.url, org.key, { query: "breach", delayMs: 50 }, { "idempotency-key": "same-key-20" })),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(responses.map((r) => r.text)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === "true").length).toBe(19);
    expect(settleCount(org.orgId)).toBe(1);
    expect(getBalance(server.deps.db, org.orgId).availablePence).toBe(98);
    // Later retries, with the body's keys reordered and spaced differently, replay too.
    const later = await postPaid(server.url, org.key, '{ "delayMs": 50,\n  "query": "breach" }', { "idempotency-key": "same-key-20" });
    expect(later.status).toBe(200);
    expect(later.text).toBe(responses[0]!.text);
    expect(settleCount(org.orgId)).toBe(1);
  });

  test("the same key with another body is 409 idempotency_key_reused and charges nothing", async () => {
    const org = createPaidOrg(server.deps, 100);
    expect((await postPaid(server.url, org.key, { query: "one" }, { "idempotency-key": "k-body" })).status).toBe(200);
    const reused = await postPaid(server.url, org.key, { query: "two" }, { "idempotency-key": "k-body" });
    expect(reused.status).toBe(409);
    expect(reused.body.error).toBe("idempotency_key_reused");
    expect(settleCount(org.orgId)).toBe(1);
  });

  test("keys are per organisation; a key longer than 255 characters is 400", async () => {
    const a = createPaidOrg(server.deps, 100);
    const b = createPaidOrg(server.deps, 100);
    const ra = await postPaid(server.url, a.key, { query: "x" }, { "idempotency-key": "shared" });
    const rb = await postPaid(server.url, b.key, { query: "x" }, { "idempotency-key": "shared" });
    expect([ra.status, rb.status]).toEqual([200, 200]);
    expect(ra.body.requestId).not.toBe(rb.body.requestId);
    const long = await postPaid(server.url, a.key, { query: "x" }, { "idempotency-key": "k".repeat(256) });
    expect(long.status).toBe(400);
    expect(long.body.error).toBe("validation_failed");
    expect((await postPaid(server.url, a.key, { query: "y" }, { "idempotency-key": "k".repeat(255) })).status).toBe(200);
  });

  test("an error is not stored: a 402 retried after a top-up succeeds, once", async () => {
    const org = createPaidOrg(server.deps, 0);
    const refused = await postPaid(server.url, org.key, { query: "x" }, { "idempotency-key": "after-top-up" });
    expect(refused.status).toBe(402);
    recordOperatorTopUp(server.deps, { orgId: org.orgId, amountPence: 10 });
    const retried = await postPaid(server.url, org.key, { query: "x" }, { "idempotency-key": "after-top-up" });
    expect(retried.status).toBe(200);
    const again = await postPaid(server.url, org.key, { query: "x" }, { "idempotency-key": "after-top-up" });
    expect(again.text).toBe(retried.text);
    expect(getBalance(server.deps.db, org.orgId).availablePence).toBe(8);
  });

  test("a request still in flight past the wait is 409 with Retry-After", async () => {
    const org = createPaidOrg(server.deps, 100);
    const slow = postPaid(server.url, org.key, { query: "slow", delayMs: 1500 }, { "idempotency-key": "in-flight" });
    await Bun.sleep(100);
    const duplicate = await postPaid(server.url, org.key, { query: "slow", delayMs: 1500 }, { "idempotency-key": "in-flight" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toBe("idempotency_key_reused");
    expect(duplicate.headers.get("retry-after")).toBe("1");
    expect((await slow).status).toBe(200);
    expect(settleCount(org.orgId)).toBe(1);
  });

  test("a process that dies after charging: the key is held until its lease lapses, then a retry reuses the charge", async () => {
    const org = createPaidOrg(server.deps, 100);
    const crashing = await startPaidChild(dataDir, ["--crash-after-charge"]);
    const body = { query: "crash" };
    const headers = { "idempotency-key": "crash-key" };
    await expect(postPaid(crashing.url, org.key, body, headers)).rejects.toThrow();
    expect(await crashing.proc.exited).toBe(70);
    expect(settleCount(org.orgId)).toBe(1);

    // Within the lease the key still counts as in flight.
    const early = await postPaid(server.url, org.key, body, headers);
    expect(early.status).toBe(409);

    // After the lease a retry runs again under the same operation id: the charge is found, not repeated.
    const later = await startPaidServer(dataDir, { clock: { nowMs: () => Date.now() + IN_FLIGHT_LEASE_MS + 1_000 } });
    try {
      const retried = await postPaid(later.url, org.key, body, headers);
      expect(retried.status).toBe(200);
      const operationId = server.deps.db
        .query<{ id: string }, [string, string]>("SELECT operation_id AS id FROM idempotency_keys WHERE org_id = ? AND key = ?")
        .get(org.orgId, "crash-key")!.id;
      expect(retried.body.requestId).toBe(operationId);
      expect(settleCount(org.orgId)).toBe(1);
      expect(getBalance(server.deps.db, org.orgId).availablePence).toBe(98);
      // And from now on the stored response is replayed.
      expect((await postPaid(server.url, org.key, body, headers)).text).toBe(retried.text);
    } finally {
      await later.stop();
    }
    expect(verifyLedger(server.deps.db).ok).toBe(true);
  });
});
