import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { Refusal } from "../../src/errors";
import { openDatabase } from "../../src/db/open";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { deleteDocumentChunks, indexDocumentChunks } from "../../src/search/indexing";
import type { SearchDeps } from "../../src/search/search-index";
import { resolveJurisdictions, searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { readySearchIndex } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// One index for the whole file: the sample corpus with the default (static) embedder.
let dir: string;
let deps: SearchDeps & { db: Database };
let all: string[];

function addOrg(id: string, slugs: string[]): void {
  deps.db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, ?, 0)").run(id, id);
  for (const s of slugs) deps.db.query("INSERT INTO organisation_jurisdictions (org_id, slug) VALUES (?, ?)").run(id, s);
}

const search = (orgId: string, query: string, jurisdictions: string[], topK = 10) => searchKnowledgeBase(deps, { orgId, query, jurisdictions, topK });

beforeAll(async () => {
  dir = tempDir();
  const db = await openDatabase(dir);
  deps = { db, searchIndex: await readySearchIndex(db) };
  const summary = await importSampleCorpus(deps);
  expect(summary.chunksAdded).toBeGreaterThan(700);
  all = deps.db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  addOrg("org-a", all);
  addOrg("org-b", all);
});

afterAll(() => {
  deps.db.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("citations come first", () => {
  for (const [query, first] of [
    ["Article 33", "GDPR > Article 33 (Notification of a personal data breach to the supervisory authority) > 1–2"],
    ["GDPR Art. 17(1)", "GDPR > Article 17 (Right to erasure (‘right to be forgotten’)) > 1"],
    ["899-aa", "N.Y. Gen. Bus. Law § 899-aa (Notification; person without valid authorization has acquired private information) > 1 > (a)–(c)"],
    ["§ 899-aa(8) notice to the attorney general", "N.Y. Gen. Bus. Law § 899-aa (Notification; person without valid authorization has acquired private information) > 7–9"],
    ["1798.82", "Cal. Civ. Code § 1798.82 > (a)"],
    ["§ 1003.4", "12 CFR 1003.4 (Compilation of loan data) > (a) > (1)–(10)"],
    // Everyday words around a citation expand, but the cited passage still comes first.
    ["can I sue under Article 82", "GDPR > Article 82 (Right to compensation and liability) > 1–3"],
  ] as const) {
    test(query, async () => {
      const results = await search("org-a", query, all);
      expect(results[0]!.citationPath).toBe(first);
      expect(results[0]!.score).toBe(1);
    });
  }
});

test("scores are 0..1, best first, with the spec's fields plus title and highlights", async () => {
  const results = await search("org-a", "how quickly must a controller notify the supervisory authority of a personal data breach", all);
  expect(results).toHaveLength(10);
  expect(results[0]!.citationPath).toStartWith("GDPR > Article 33 (Notification of a personal data breach to the supervisory authority)");
  expect(results[0]!.title).toBe("Notification of a personal data breach to the supervisory authority");
  for (let i = 1; i < results.length; i++) expect(results[i]!.score).toBeLessThanOrEqual(results[i - 1]!.score);
  for (const r of results) {
    expect(r.score).toBeGreaterThan(0);
    expect(r.score).toBeLessThanOrEqual(1);
    expect(Object.keys(r).sort()).toEqual(["citationPath", "content", "highlights", "jurisdictionSlugs", "score", "source", "title"]);
    expect(r.content).toContain(r.highlights!.snippet.replace(/^…|…$/g, "").split(" ")[0]!);
  }
  expect(results[0]!.highlights!.terms.map((t) => t.toLowerCase())).toEqual(expect.arrayContaining(["supervisory", "authority"]));
});

test("jurisdiction filtering happens inside the KNN: a small jurisdiction still fills topK", async () => {
  const results = await searchKnowledgeBase(deps, { orgId: "org-a", query: "definition of personal information", jurisdictions: ["us-gu"], topK: 10 }, { ...DEFAULT_SEARCH_TUNING, fold: false });
  expect(results).toHaveLength(10);
  for (const r of results) expect(r.jurisdictionSlugs).toEqual(["us-gu"]);
});

describe("a jurisdiction named only in the question", () => {
  test("ranks its passages first when the request has no filter: names, residents, 'under X law', postal codes", async () => {
    for (const [query, slug] of [
      ["Vermont preliminary notice to the Attorney General", "us-vt"],
      ["Ohioans: how long does a business have to tell them about a breach", "us-oh"],
      ["under Oregon law what must a breach notice contain", "us-or"],
      ["a Georgia resident's data was stolen: must the consumer reporting agencies be told", "us-ga"],
      ["our TX customers' data leaked, what is the deadline", "us-tx"],
      ["in Europe how fast must a data breach be reported", "eu"],
    ] as const) {
      const results = await search("org-a", query, resolveJurisdictions(deps, "org-a"));
      expect(results[0]!.jurisdictionSlugs).toEqual([slug]);
    }
  });

  test("never widens the request's filter", async () => {
    const results = await search("org-a", "Ohioans: how long does a business have to tell them about a breach", ["us-ny", "eu"]);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(["us-ny", "eu"]).toContain(r.jurisdictionSlugs![0]!);
  });

  test("never reaches a jurisdiction the organisation has not enabled", async () => {
    addOrg("org-ny-eu", ["eu", "us-ny"]);
    const results = await search("org-ny-eu", "Ohioans: how long does a business have to tell them about a breach", resolveJurisdictions(deps, "org-ny-eu"), 50);
    expect(results.length).toBeGreaterThan(0);
    for (const r of results) expect(["us-ny", "eu"]).toContain(r.jurisdictionSlugs![0]!);
  });
});

describe("organisation documents", () => {
  beforeAll(async () => {
    await indexDocumentChunks(deps, {
      documentId: "doc-ny",
      orgId: "org-a",
      jurisdictions: ["us-ny"],
      source: "policy-ny.pdf",
      chunks: [{ text: "Zorblax incident playbook: the security team pages the duty lawyer within one hour.", citationPath: "policy-ny.pdf#page=1", position: 0 }],
    });
    await indexDocumentChunks(deps, {
      documentId: "doc-global",
      orgId: "org-a",
      jurisdictions: [],
      source: "policy-global.pdf",
      chunks: [{ text: "Zorblax retention schedule: customer records are destroyed after seven years.", citationPath: "policy-global.pdf#page=2", position: 0 }],
    });
  });

  test("match their own organisation only, by jurisdiction; no jurisdictions matches every search", async () => {
    const sources = async (orgId: string, jurisdictions: string[]) => (await search(orgId, "Zorblax", jurisdictions, 50)).map((r) => r.source);
    expect(await sources("org-a", ["us-ny"])).toEqual(expect.arrayContaining(["policy-ny.pdf", "policy-global.pdf"]));
    expect(await sources("org-a", all)).toEqual(expect.arrayContaining(["policy-ny.pdf", "policy-global.pdf"]));
    const euOnly = await sources("org-a", ["eu"]);
    expect(euOnly).toContain("policy-global.pdf");
    expect(euOnly).not.toContain("policy-ny.pdf");
    const other = await sources("org-b", all);
    expect(other).not.toContain("policy-ny.pdf");
    expect(other).not.toContain("policy-global.pdf");
  });

  test("deleteDocumentChunks removes a document from both indexes", async () => {
    deleteDocumentChunks(deps, "doc-ny");
    const results = await search("org-a", "Zorblax incident playbook duty lawyer", ["us-ny"], 50);
    expect(results.map((r) => r.source)).not.toContain("policy-ny.pdf");
    expect(deps.db.query("SELECT count(*) AS n FROM search_chunk_scopes WHERE scope = 'org:org-a:us-ny'").get()).toEqual({ n: 0 });
  });
});

test("re-importing the sample corpus changes nothing", async () => {
  const summary = await importSampleCorpus(deps);
  expect(summary).toMatchObject({ chunksAdded: 0, chunksRemoved: 0 });
  expect(summary.chunksUnchanged).toBeGreaterThan(700);
});

test("resolveJurisdictions: default is every enabled slug; others are invalid_jurisdictions", () => {
  addOrg("org-c", ["eu", "us-ny"]);
  expect(resolveJurisdictions(deps, "org-c")).toEqual(["eu", "us-ny"]);
  expect(resolveJurisdictions(deps, "org-c", ["us-ny"])).toEqual(["us-ny"]);
  for (const bad of [["us-ca"], ["nowhere"]]) {
    try {
      resolveJurisdictions(deps, "org-c", bad);
      throw new Error("accepted");
    } catch (error) {
      expect(error).toBeInstanceOf(Refusal);
      expect((error as Refusal).status).toBe(400);
      expect((error as Refusal).code).toBe("invalid_jurisdictions");
    }
  }
});
