import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { startTestServer, type TestServer } from "../helpers/server";
import { balance, credit, runEntries, seedCorpus, waitForStatus } from "./fixtures";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
  await seedCorpus(server.deps);
});
afterAll(() => server.stop());

function orgWithCredit(pence: number, jurisdictions?: string[]) {
  const org = server.createOrg({ jurisdictions });
  if (pence > 0) credit(server.deps, org.orgId, pence);
  return org;
}

const screen = (key: string, body: unknown, headers?: Record<string, string>) =>
  server.api("/v1/screenings", { key, body, headers });

describe("POST /v1/screenings then GET /v1/screenings/{id}", () => {
  test("lifecycle: 202 pending with the estimate, then completed with results in order, charged once", async () => {
    const org = orgWithCredit(1000);
    const keywords = ["personal data breach notification", "deceptive practices", "breach of the security of the system"];
    const created = await screen(org.key, { keywords, topK: 2 });
    expect(created.status).toBe(202);
    expect(created.body).toEqual({ id: expect.any(String), status: "pending", estimatedCostPence: 6 });
    const { id } = created.body;

    const done = await waitForStatus(server, org.key, id, ["completed", "failed"]);
    expect(done.status).toBe(200);
    expect(done.body).toEqual({
      id,
      status: "completed",
      keywords,
      jurisdictions: ["eu", "us", "us-ny"],
      results: keywords.map((keyword) => ({ keyword, matches: expect.any(Array) })),
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      completedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    for (const r of done.body.results) expect(r.matches.length).toBeLessThanOrEqual(2);
    expect(done.body.results[0].matches[0]).toMatchObject({ source: "GDPR Article 33", jurisdictionSlugs: ["eu"] });
    expect(done.body.results[1].matches[0]).toMatchObject({ source: "FTC Act Section 5" });

    // reserve −6 (hold), then release +6 and settle −6 committed with the completion.
    expect(runEntries(server.deps, org.orgId, id)).toEqual([
      { type: "reserve", amountPence: -6, key: `reserve:${id}` },
      { type: "release", amountPence: 6, key: `release:${id}` },
      { type: "settle", amountPence: -6, key: `settle:${id}` },
    ]);
    expect(balance(server.deps, org.orgId)).toEqual({ balancePence: 994, heldPence: 0, availablePence: 994, currency: "GBP" });
    const ledger = await server.api("/v1/credits/ledger", { key: org.key });
    expect(ledger.body.entries.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(["reserve", "settle", "release"]));
  });

  test("402 insufficient_credit before anything is created", async () => {
    const org = orgWithCredit(3);
    const res = await screen(org.key, { keywords: ["a", "b"] });
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: "insufficient_credit", details: "available 3 pence, required 4 pence" });
    const runs = server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM runs WHERE org_id = ?").get(org.orgId)!;
    expect(runs.n).toBe(0);
    expect(balance(server.deps, org.orgId)).toMatchObject({ balancePence: 3, heldPence: 0 });
  });

  test("jurisdictions default to the organisation's enabled set and filter the matches", async () => {
    const org = orgWithCredit(100, ["eu", "us-ca"]);
    const all = await screen(org.key, { keywords: ["zebrafinch categories"] });
    const done = await waitForStatus(server, org.key, all.body.id, ["completed"]);
    expect(done.body.jurisdictions).toEqual(["eu", "us-ca"]);
    expect(done.body.results[0].matches[0]).toMatchObject({ source: "CCPA 1798.100" });

    const euOnly = await screen(org.key, { keywords: ["zebrafinch categories"], jurisdictions: ["eu"] });
    const filtered = await waitForStatus(server, org.key, euOnly.body.id, ["completed"]);
    expect(filtered.body.jurisdictions).toEqual(["eu"]);
    for (const m of filtered.body.results[0].matches) expect(m.jurisdictionSlugs).toEqual(["eu"]);
  });

  test("400 invalid_jurisdictions for a slug unknown or not enabled; nothing is held", async () => {
    const org = orgWithCredit(100, ["eu"]);
    for (const jurisdictions of [["us-ny"], ["eu", "atlantis"]]) {
      const res = await screen(org.key, { keywords: ["breach"], jurisdictions });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("invalid_jurisdictions");
    }
    expect(balance(server.deps, org.orgId).heldPence).toBe(0);
  });

  test("400 validation_failed names the field for bad keywords and topK", async () => {
    const org = orgWithCredit(1000);
    const cases: [unknown, string][] = [
      [{}, "body.keywords"],
      [{ keywords: [] }, "body.keywords"],
      [{ keywords: Array.from({ length: 101 }, (_, i) => `k${i}`) }, "body.keywords"],
      [{ keywords: [""] }, "body.keywords.0"],
      [{ keywords: ["   "] }, "body.keywords.0"],
      [{ keywords: ["x".repeat(1001)] }, "body.keywords.0"],
      [{ keywords: ["ok"], topK: 0 }, "body.topK"],
      [{ keywords: ["ok"], topK: 21 }, "body.topK"],
      [{ keywords: ["ok"], jurisdictions: [] }, "body.jurisdictions"],
    ];
    for (const [body, field] of cases) {
      const res = await screen(org.key, body);
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("validation_failed");
      expect(res.body.details).toStartWith(`${field}:`);
    }
    const hundred = await screen(org.key, { keywords: Array.from({ length: 100 }, (_, i) => `k${i}`), topK: 20 });
    expect(hundred.body).toMatchObject({ status: "pending", estimatedCostPence: 200 });
  });

  test("404 not_found for another organisation's, an unknown or a malformed id", async () => {
    const owner = orgWithCredit(100);
    const other = orgWithCredit(100);
    const { id } = (await screen(owner.key, { keywords: ["breach"] })).body;
    for (const path of [`/v1/screenings/${id}`, `/v1/screenings/${crypto.randomUUID()}`, "/v1/screenings/not-a-uuid"]) {
      const res = await server.api(path, { key: other.key });
      expect(res.status).toBe(404);
      expect(res.body.error).toBe("not_found");
    }
    expect((await server.api(`/v1/screenings/${id}`, { key: owner.key })).status).toBe(200);
  });

  test("Idempotency-Key replay returns the first response and creates one run and one hold", async () => {
    const org = orgWithCredit(100);
    const headers = { "idempotency-key": `screen-${crypto.randomUUID()}` };
    const body = { keywords: ["breach", "notify"] };
    const first = await screen(org.key, body, headers);
    const again = await screen(org.key, body, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const conflict = await screen(org.key, { keywords: ["different"] }, headers);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe("idempotency_key_reused");
    await waitForStatus(server, org.key, first.body.id, ["completed"]);
    const runs = server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM runs WHERE org_id = ?").get(org.orgId)!;
    expect(runs.n).toBe(1);
    expect(balance(server.deps, org.orgId)).toMatchObject({ balancePence: 96, heldPence: 0 });
  });

  test("many concurrent screenings: credit for exactly 10 of 20, each accepted one charged exactly once", async () => {
    const org = orgWithCredit(10 * 6);
    const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => screen(org.key, { keywords: [`breach ${i}`, "notify", "authority"] })));
    const accepted = responses.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(10);
    expect(responses.filter((r) => r.status === 402)).toHaveLength(10);
    for (const r of accepted) await waitForStatus(server, org.key, r.body.id, ["completed"]);
    for (const r of accepted) expect(runEntries(server.deps, org.orgId, r.body.id).map((e) => e.type)).toEqual(["reserve", "release", "settle"]);
    expect(balance(server.deps, org.orgId)).toEqual({ balancePence: 0, heldPence: 0, availablePence: 0, currency: "GBP" });
  });

  test("a screening whose worker kept dying fails with its hold released and nothing charged", async () => {
    const org = orgWithCredit(100);
    const { id } = (await screen(org.key, { keywords: ["breach"] })).body;
    await waitForStatus(server, org.key, id, ["completed"]);
    // Replay the same money path on a run abandoned by a dead process after its last attempt.
    const abandoned = crypto.randomUUID();
    const { reserve } = await import("../../src/billing/ledger");
    const { createRun } = await import("../../src/jobs/store");
    server.deps.db.transaction(() => {
      reserve(server.deps.db, { orgId: org.orgId, runId: abandoned, amountPence: 2, description: "test hold", nowMs: Date.now() });
      createRun(server.deps.db, { id: abandoned, orgId: org.orgId, kind: "screening", input: { keywords: ["breach"], jurisdictions: ["eu"], topK: 5 }, createdAtMs: Date.now() });
      server.deps.db
        .query("UPDATE runs SET status = 'running', attempts = ?, lease_owner = ?, lease_expires_at_ms = 0 WHERE id = ?")
        .run(server.deps.config.runMaxAttempts, `${hostname()}/999999999/gone`, abandoned);
    }).immediate();
    await server.deps.jobs.stop();
    await server.deps.jobs.start();
    const failed = await waitForStatus(server, org.key, abandoned, ["failed"]);
    expect(failed.body).toMatchObject({ status: "failed", error: expect.stringContaining("abandoned"), completedAt: expect.any(String) });
    expect(failed.body.results).toBeUndefined();
    expect(runEntries(server.deps, org.orgId, abandoned).map((e) => [e.type, e.amountPence])).toEqual([["reserve", -2], ["release", 2]]);
    expect(balance(server.deps, org.orgId)).toMatchObject({ balancePence: 98, heldPence: 0 });
  });

  test("queue depth and screening durations are on /metrics", async () => {
    const metrics = await server.api("/metrics");
    expect(metrics.body).toContain('regkb_runs{kind="screening",status="pending"}');
    expect(metrics.body).toMatch(/regkb_run_duration_seconds_count\{kind="screening",status="completed"\} \d+/);
  });
});
