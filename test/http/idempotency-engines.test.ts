// The idempotency records' SQL (src/http/idempotency.ts: claim, finish, release, purge) on
// SQLite and on PostgreSQL through the synchronous handle (test/helpers/engines.ts).
import { beforeAll, expect, test } from "bun:test";
import {
  claimIdempotencyKey,
  finishIdempotentRequest,
  IDEMPOTENCY_RETENTION_MS,
  purgeExpiredIdempotencyKeys,
  releaseIdempotencyKey,
  type IdempotencyClaim,
  type IdempotencyDeps,
  type IdempotentRequest,
} from "../../src/http/idempotency";
import { Refusal } from "../../src/errors";
import { forEachEngine, type TestEngine } from "../helpers/engines";

const LEASE_MS = 60_000;

forEachEngine((current) => {
  let engine: TestEngine;
  let nowMs = 1_700_000_000_000;
  let deps: IdempotencyDeps;
  let orgId: string;
  beforeAll(() => {
    engine = current();
    deps = { db: engine.db, clock: { nowMs: () => nowMs } };
    orgId = engine.createOrganisation("Idempotent");
  });

  const request = (key: string, body: unknown = { query: "capital" }): IdempotentRequest => ({ orgId, key, method: "POST", route: "/v1/search", body });
  const claimed = async (key: string, body?: unknown): Promise<IdempotencyClaim> => {
    const outcome = await claimIdempotencyKey(deps, request(key, body), { leaseMs: LEASE_MS, waitMs: 0 });
    if (outcome.kind !== "claimed") throw new Error(`expected a claim, got ${outcome.kind}`);
    return outcome.claim;
  };
  const refusal = async (key: string, body?: unknown) => {
    try {
      await claimIdempotencyKey(deps, request(key, body), { leaseMs: LEASE_MS, waitMs: 0 });
    } catch (error) {
      if (error instanceof Refusal) return { status: error.status, code: error.code, details: error.details };
      throw error;
    }
    throw new Error("expected a refusal");
  };

  test("a finished request is replayed byte for byte; key order in the body does not matter; another body is 409", async () => {
    const held = await claimed("replay", { query: "capital", limit: 5 });
    finishIdempotentRequest(deps, held, { status: 201, contentType: "application/json", body: '{"ok":true}' });
    expect(await claimIdempotencyKey(deps, request("replay", { limit: 5, query: "capital" }))).toEqual({
      kind: "replay",
      status: 201,
      contentType: "application/json",
      body: '{"ok":true}',
    });
    expect(await refusal("replay", { query: "other" })).toMatchObject({ status: 409, code: "idempotency_key_reused" });
  });

  test("a held key is busy (409 with Retry-After); released, it is claimed again under the same operation id", async () => {
    const first = await claimed("held");
    expect(await refusal("held")).toMatchObject({ status: 409, code: "idempotency_key_reused", details: expect.stringContaining("in flight") });
    releaseIdempotencyKey(deps, first);
    const second = await claimed("held");
    expect(second.operationId).toBe(first.operationId);
    expect(second.ownerToken).not.toBe(first.ownerToken);
    // The first holder's late finish changes nothing: the key is no longer its own.
    finishIdempotentRequest(deps, first, { status: 200, contentType: "application/json", body: "{}" });
    expect(await refusal("held")).toMatchObject({ status: 409 });
  });

  test("an abandoned claim lapses after its lease; an expired record starts afresh with a new operation id", async () => {
    const abandoned = await claimed("lapse");
    nowMs += LEASE_MS;
    const retaken = await claimed("lapse");
    expect(retaken.operationId).toBe(abandoned.operationId);
    finishIdempotentRequest(deps, retaken, { status: 200, contentType: "text/plain;charset=utf-8", body: "done" });
    nowMs += IDEMPOTENCY_RETENTION_MS;
    const fresh = await claimed("lapse", { query: "a different request is fine once expired" });
    expect(fresh.operationId).not.toBe(abandoned.operationId);
  });

  test("purge deletes expired records oldest first, at most a batch per call", async () => {
    // Earlier tests' records all expire by then: only this test's remain.
    purgeExpiredIdempotencyKeys(engine.db, nowMs + IDEMPOTENCY_RETENTION_MS);
    const startMs = ++nowMs;
    for (const key of ["purge-a", "purge-b", "purge-c"]) {
      finishIdempotentRequest(deps, await claimed(key), { status: 200, contentType: "application/json", body: "{}" });
      nowMs += 1;
    }
    const keys = () => engine.db.query<{ key: string }, [string]>("SELECT key FROM idempotency_keys WHERE org_id = ? AND key LIKE 'purge-%' ORDER BY key").all(orgId).map((r) => r.key);
    expect(purgeExpiredIdempotencyKeys(engine.db, startMs + IDEMPOTENCY_RETENTION_MS - 1)).toBe(0);
    expect(purgeExpiredIdempotencyKeys(engine.db, startMs + IDEMPOTENCY_RETENTION_MS + 2, 1)).toBe(1);
    expect(keys()).toEqual(["purge-b", "purge-c"]);
    expect(purgeExpiredIdempotencyKeys(engine.db, startMs + IDEMPOTENCY_RETENTION_MS + 2)).toBe(2);
    expect(keys()).toEqual([]);
  });
});
