import { afterAll, beforeAll, expect, test } from "bun:test";
import { importPassages, loadSampleCorpus } from "../../src/search/corpus/import";
import { startTestServer, TEST_JURISDICTIONS, type TestServer } from "../helpers/server";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  // The part of the sample corpus in the test jurisdictions: enough for real results, quick to embed.
  const slugs = new Set(TEST_JURISDICTIONS.map((j) => j.slug));
  const { passages } = await loadSampleCorpus();
  await importPassages(server.deps, { jurisdictions: [], passages: passages.filter((p) => p.jurisdictions.every((s) => slugs.has(s))) });
});

afterAll(() => server.stop());

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test("POST /v1/search charges 2p and returns ranked matches", async () => {
  const org = server.createOrg({ balancePence: 100 });
  const res = await server.api("/v1/search", { key: org.key, body: { query: "Article 33", topK: 3 } });
  expect(res.status).toBe(200);
  expect(res.body.requestId).toMatch(UUID_V7);
  expect(res.body.creditsChargedPence).toBe(2);
  expect(res.body.availablePence).toBe(98);
  expect(res.body.results).toHaveLength(3);
  expect(res.body.results[0]).toMatchObject({
    citationPath: "GDPR > Article 33 (Notification of a personal data breach to the supervisory authority) > 1–2",
    title: "Notification of a personal data breach to the supervisory authority",
    source: "Regulation (EU) 2016/679 (General Data Protection Regulation)",
    jurisdictionSlugs: ["eu"],
    score: 1,
  });
  const ledger = await server.api("/v1/credits/ledger", { key: org.key });
  expect(ledger.body.entries[0]).toMatchObject({ type: "settle", amountPence: -2 });
});

test("results stay within the requested jurisdictions, and default to every enabled one", async () => {
  const org = server.createOrg({ balancePence: 100, jurisdictions: ["eu", "us-ny"] });
  const onlyNy = await server.api("/v1/search", { key: org.key, body: { query: "notification of a security breach", jurisdictions: ["us-ny"] } });
  expect(onlyNy.status).toBe(200);
  for (const r of onlyNy.body.results) expect(r.jurisdictionSlugs).toEqual(["us-ny"]);
  const everything = await server.api("/v1/search", { key: org.key, body: { query: "notification of a security breach", topK: 50 } });
  const seen = new Set(everything.body.results.flatMap((r: { jurisdictionSlugs: string[] }) => r.jurisdictionSlugs));
  expect([...seen].sort()).toEqual(["eu", "us-ny"]);
});

test("402 insufficient_credit before any work, nothing charged", async () => {
  const org = server.createOrg({ balancePence: 1 });
  const res = await server.api("/v1/search", { key: org.key, body: { query: "breach" } });
  expect(res.status).toBe(402);
  expect(res.body).toEqual({ error: "insufficient_credit", details: "available 1 pence, required 2 pence" });
  const credits = await server.api("/v1/credits", { key: org.key });
  expect(credits.body.availablePence).toBe(1);
});

test("400 invalid_jurisdictions for a slug that is unknown or not enabled, without charging", async () => {
  const org = server.createOrg({ balancePence: 100, jurisdictions: ["eu"] });
  for (const jurisdictions of [["us-ca"], ["atlantis"]]) {
    const res = await server.api("/v1/search", { key: org.key, body: { query: "breach", jurisdictions } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("invalid_jurisdictions");
  }
  expect((await server.api("/v1/credits", { key: org.key })).body.availablePence).toBe(100);
});

test("400 validation_failed at the limits of query, topK and jurisdictions", async () => {
  const org = server.createOrg({ balancePence: 100 });
  for (const body of [{}, { query: "" }, { query: "   " }, { query: "x".repeat(1001) }, { query: "breach", topK: 0 }, { query: "breach", topK: 51 }, { query: "breach", jurisdictions: [] }]) {
    const res = await server.api("/v1/search", { key: org.key, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("validation_failed");
  }
  const longest = await server.api("/v1/search", { key: org.key, body: { query: "breach ".repeat(142).slice(0, 1000), topK: 50 } });
  expect(longest.status).toBe(200);
  expect(longest.body.results.length).toBeLessThanOrEqual(50);
});
