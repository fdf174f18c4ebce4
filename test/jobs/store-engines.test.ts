// The runs store (src/jobs/store.ts) on SQLite and on PostgreSQL through the synchronous
// handle (test/helpers/engines.ts): claim order and fairness, the per-organisation cap,
// lease renewal, expiry and take-over, owner checks, and the queue-depth counts.
import { beforeAll, expect, test } from "bun:test";
import {
  claimNextRun,
  countUnfinished,
  createRun,
  findRun,
  getRunById,
  leaseUnchanged,
  listOthersLeases,
  markCompleted,
  markFailed,
  renewLeases,
  returnToPending,
  RUN_INPUT_BYTES_MAX,
} from "../../src/jobs/store";
import { uuidv7 } from "../../src/ids";
import { forEachEngine, type TestEngine } from "../helpers/engines";

const LEASE_MS = 30_000;

forEachEngine((current) => {
  let engine: TestEngine;
  let kindNumber = 0;
  beforeAll(() => {
    engine = current();
  });

  /** A kind of run no other test uses, so each test sees only its own runs. */
  const freshKind = () => `store_test_${++kindNumber}`;

  const create = (orgId: string, kind: string, createdAtMs: number, input: unknown = { n: createdAtMs }) => {
    const id = uuidv7();
    createRun(engine.db, { id, orgId, kind, input, createdAtMs });
    return id;
  };

  const claim = (kind: string, owner: string, nowMs: number, perOrganisationMax = 0) =>
    claimNextRun(engine.db, { kind, owner, nowMs, leaseMs: LEASE_MS, perOrganisationMax });

  test("a created run is found by id, organisation and kind, and by nothing else", () => {
    const kind = freshKind();
    const orgId = engine.createOrganisation("Finder");
    const other = engine.createOrganisation("Other");
    const id = create(orgId, kind, 1_000, { keywords: ["ünïcode", "x"], nested: { n: 2 } });
    const run = findRun(engine.db, { id, orgId, kind });
    expect(run).toEqual({
      id,
      orgId,
      kind,
      status: "pending",
      input: { keywords: ["ünïcode", "x"], nested: { n: 2 } },
      output: null,
      error: null,
      attempts: 0,
      createdAtMs: 1_000,
      startedAtMs: null,
      completedAtMs: null,
    });
    expect(getRunById(engine.db, id)).toEqual(run);
    expect(findRun(engine.db, { id, orgId: other, kind })).toBeUndefined();
    expect(findRun(engine.db, { id, orgId, kind: `${kind}_x` })).toBeUndefined();
    expect(() => create(orgId, kind, 2_000, "x".repeat(RUN_INPUT_BYTES_MAX))).toThrow(/at most/);
  });

  test("claims alternate between organisations: fewest in progress, then least recently served, then oldest waiting", () => {
    const kind = freshKind();
    const noisy = engine.createOrganisation("Noisy");
    const quiet = engine.createOrganisation("Quiet");
    const n1 = create(noisy, kind, 100);
    const n2 = create(noisy, kind, 200);
    const n3 = create(noisy, kind, 300);
    const q1 = create(quiet, kind, 400);
    const q2 = create(quiet, kind, 500);
    const order = Array.from({ length: 5 }, (_, i) => claim(kind, "owner-a", 10_000 + i)?.id);
    // noisy (oldest), quiet (none running), noisy (served longer ago), quiet, noisy.
    expect(order).toEqual([n1, q1, n2, q2, n3]);
    expect(claim(kind, "owner-a", 20_000)).toBeUndefined();
    const first = getRunById(engine.db, n1)!;
    expect(first).toMatchObject({ status: "running", attempts: 1, startedAtMs: 10_000 });
  });

  test("least recently served wins when organisations have as many in progress", () => {
    const kind = freshKind();
    const a = engine.createOrganisation("A");
    const b = engine.createOrganisation("B");
    const a1 = create(a, kind, 100);
    const b1 = create(b, kind, 200);
    expect(claim(kind, "w", 1_000)!.id).toBe(a1);
    expect(claim(kind, "w", 1_001)!.id).toBe(b1);
    expect(markCompleted(engine.db, a1, "w", "{}", 1_002)).toBe(true);
    expect(markCompleted(engine.db, b1, "w", "{}", 1_003)).toBe(true);
    // Both idle again; B's new run is older, but A was served less recently, so A goes first.
    const b2 = create(b, kind, 300);
    const a2 = create(a, kind, 400);
    expect(claim(kind, "w", 1_004)!.id).toBe(a2);
    expect(claim(kind, "w", 1_005)!.id).toBe(b2);
  });

  test("long queues of many organisations: every run is claimed once, oldest first within each, organisations in turn", () => {
    const kind = freshKind();
    const orgIds = Array.from({ length: 20 }, (_, i) => engine.createOrganisation(`Queue ${i}`));
    const solo = engine.createOrganisation("Solo backlog");
    const created = new Map<string, string[]>();
    let age = 0;
    for (const orgId of [solo, ...orgIds]) {
      const count = orgId === solo ? 40 : 2;
      created.set(orgId, Array.from({ length: count }, () => create(orgId, kind, ++age)));
    }
    const claimed = Array.from({ length: 80 }, (_, i) => claim(kind, "w", 10_000 + i)!);
    expect(claim(kind, "w", 20_000)).toBeUndefined();
    expect(new Set(claimed.map((r) => r.id)).size).toBe(80);
    // The first round serves every organisation once, oldest waiting first; later rounds keep that turn order.
    expect(claimed.slice(0, 21).map((r) => r.orgId)).toEqual([solo, ...orgIds]);
    expect(claimed.slice(21, 42).map((r) => r.orgId)).toEqual([solo, ...orgIds]);
    expect(claimed.slice(42).every((r) => r.orgId === solo)).toBe(true);
    for (const [orgId, ids] of created) expect(claimed.filter((r) => r.orgId === orgId).map((r) => r.id)).toEqual(ids);
  });

  test("the per-organisation cap leaves an organisation's further runs waiting, counted across owners", () => {
    const kind = freshKind();
    const a = engine.createOrganisation("Capped A");
    const b = engine.createOrganisation("Capped B");
    create(a, kind, 100);
    create(a, kind, 200);
    create(b, kind, 300);
    expect(claim(kind, "owner-1", 1_000, 1)!.orgId).toBe(a);
    expect(claim(kind, "owner-2", 1_001, 1)!.orgId).toBe(b);
    expect(claim(kind, "owner-2", 1_002, 1)).toBeUndefined();
    expect(claim(kind, "owner-2", 1_003, 2)!.orgId).toBe(a);
  });

  test("a lease is renewed by its owner only; once expired another owner takes it over, and the first can no longer finish it", () => {
    const kind = freshKind();
    const orgId = engine.createOrganisation("Leases");
    const id = create(orgId, kind, 100);
    const run = claim(kind, "node-a", 1_000)!;
    expect(run.id).toBe(id);
    expect(listOthersLeases(engine.db, kind, "node-a")).toEqual([]);
    expect(listOthersLeases(engine.db, kind, "node-b")).toEqual([{ id, leaseOwner: "node-a", leaseExpiresAtMs: 1_000 + LEASE_MS, attempts: 1 }]);

    // Renewal moves the expiry, so a take-over decided on the old lease is refused.
    const seen = listOthersLeases(engine.db, kind, "node-b")[0]!;
    expect(renewLeases(engine.db, "node-a", 50_000)).toEqual(new Set([id]));
    expect(renewLeases(engine.db, "node-b", 60_000)).toEqual(new Set());
    expect(leaseUnchanged(engine.db, seen)).toBe(false);

    // node-a stops renewing; node-b finds the lease expired and takes the run back.
    const expired = listOthersLeases(engine.db, kind, "node-b")[0]!;
    expect(expired.leaseExpiresAtMs).toBe(50_000);
    const taken = engine.db
      .transaction(() => leaseUnchanged(engine.db, expired) && returnToPending(engine.db, id, expired.leaseOwner, false))
      .immediate();
    expect(taken).toBe(true);
    const again = claim(kind, "node-b", 60_000)!;
    expect(again).toMatchObject({ id, status: "running", attempts: 2, startedAtMs: 60_000 });

    // node-a wakes up: its lease is gone, so it can neither finish, fail, requeue nor renew the run.
    expect(markCompleted(engine.db, id, "node-a", '{"by":"a"}', 61_000)).toBe(false);
    expect(markFailed(engine.db, id, "node-a", "a failed", 61_000)).toBe(false);
    expect(returnToPending(engine.db, id, "node-a", true)).toBe(false);
    expect(renewLeases(engine.db, "node-a", 90_000)).toEqual(new Set());
    expect(markCompleted(engine.db, id, "node-b", '{"by":"b"}', 62_000)).toBe(true);
    expect(markCompleted(engine.db, id, "node-b", '{"by":"b2"}', 63_000)).toBe(false);
    expect(getRunById(engine.db, id)).toMatchObject({ status: "completed", output: { by: "b" }, attempts: 2, completedAtMs: 62_000 });
    expect(listOthersLeases(engine.db, kind, "node-c")).toEqual([]);
  });

  test("a failure is kept (bounded) under the owner's lease; returning to pending may refund the attempt", () => {
    const kind = freshKind();
    const orgId = engine.createOrganisation("Failures");
    const failing = create(orgId, kind, 100);
    const requeued = create(orgId, kind, 200);
    expect(claim(kind, "w", 1_000)!.id).toBe(failing);
    expect(markFailed(engine.db, failing, "w", "e".repeat(5_000), 1_500)).toBe(true);
    const failed = getRunById(engine.db, failing)!;
    expect(failed).toMatchObject({ status: "failed", completedAtMs: 1_500, attempts: 1 });
    expect(failed.error!.length).toBe(2_000);

    expect(claim(kind, "w", 2_000)!.id).toBe(requeued);
    expect(returnToPending(engine.db, requeued, "w", true)).toBe(true);
    expect(getRunById(engine.db, requeued)).toMatchObject({ status: "pending", attempts: 0 });
    expect(claim(kind, "w", 3_000)!.id).toBe(requeued);
    expect(returnToPending(engine.db, requeued, "w", false)).toBe(true);
    expect(getRunById(engine.db, requeued)).toMatchObject({ status: "pending", attempts: 1 });
  });

  test("countUnfinished counts pending and running runs by kind, as numbers", () => {
    const kind = freshKind();
    const orgId = engine.createOrganisation("Counted");
    for (let i = 0; i < 4; i++) create(orgId, kind, 100 + i);
    claim(kind, "w", 1_000);
    const done = claim(kind, "w", 1_001)!;
    markCompleted(engine.db, done.id, "w", "null", 1_002);
    const mine = countUnfinished(engine.db)
      .filter((row) => row.kind === kind)
      .sort((x, y) => x.status.localeCompare(y.status));
    expect(mine).toEqual([
      { kind, status: "pending", count: 2 },
      { kind, status: "running", count: 1 },
    ]);
  });
});
