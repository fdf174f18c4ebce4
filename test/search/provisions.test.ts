// Provisions as wholes (src/search/provisions.ts): what get_provision and the MCP provisions
// index read, over the whole sample corpus.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listJurisdictions } from "../../src/auth/store";
import { Refusal } from "../../src/errors";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { findProvision, provisionCitation, provisionIndex } from "../../src/search/provisions";
import { deleteDocumentChunks, indexDocument } from "../../src/search/indexing";
import { startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
let allSlugs: string[];

/** A citation path, allowing a title after the provision ("GDPR > Article 33 (Notification of …) > 1–2"). */
const path = (provision: string, ...rest: string[]) =>
  expect.stringMatching(new RegExp(`^${provision.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}( \\(.+\\))?${rest.map((r) => ` > ${r}`).join("")}$`));

beforeAll(async () => {
  server = await startTestServer({ background: false, jurisdictions: [] });
  await importSampleCorpus(server.deps);
  allSlugs = listJurisdictions(server.deps.db).map((j) => j.slug);
}, 120_000);
afterAll(() => server.stop());

function refusal(run: () => unknown): { code: string; details?: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof Refusal) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("findProvision", () => {
  test("a GDPR article: every passage in document order, cited as the article", () => {
    const org = server.createOrg({ jurisdictions: ["eu"] });
    const provision = findProvision(server.deps.searchIndex.db, org.orgId, ["eu"], "GDPR Article 33");
    expect(provision.citation).toBe("GDPR Article 33");
    expect(provision.source).toBe("Regulation (EU) 2016/679 (General Data Protection Regulation)");
    expect(provision.jurisdictionSlugs).toEqual(["eu"]);
    expect(provision.passages.map((p) => p.citationPath)).toEqual([path("GDPR > Article 33", "1–2"), path("GDPR > Article 33", "3–5")]);
    expect(provision.passages[0]!.content).toStartWith("1. In the case of a personal data breach");
    expect(provision.passages.at(-1)!.content).toContain("shall document any personal data breaches");
  });

  test("a CFR section, a state section, and a paragraph of one", () => {
    const db = server.deps.searchIndex.db;
    const org = server.createOrg({ jurisdictions: ["us", "us-ny"] });
    const cfr = findProvision(db, org.orgId, ["us", "us-ny"], "12 CFR 1003.4");
    expect(cfr.citation).toBe("12 CFR 1003.4");
    expect(cfr.passages.length).toBeGreaterThan(3);
    expect(cfr.passages.every((p) => p.citationPath.startsWith("12 CFR 1003.4"))).toBe(true);
    const ny = findProvision(db, org.orgId, ["us", "us-ny"], "N.Y. Gen. Bus. Law § 899-aa");
    expect(ny.citation).toBe("N.Y. Gen. Bus. Law § 899-aa");
    expect(ny.jurisdictionSlugs).toEqual(["us-ny"]);
    expect(ny.passages.map((p) => p.citationPath)).toContainEqual(path("N.Y. Gen. Bus. Law § 899-aa", "2"));
    // Abbreviations either way, and a paragraph alone.
    expect(findProvision(db, org.orgId, ["us", "us-ny"], "New York General Business Law section 899-aa").citation).toBe(ny.citation);
    const paragraph = findProvision(db, org.orgId, ["us", "us-ny"], "§ 899-aa(2)");
    expect(paragraph.citation).toBe("N.Y. Gen. Bus. Law § 899-aa(2)");
    expect(paragraph.passages.map((p) => p.citationPath)).toEqual([path("N.Y. Gen. Bus. Law § 899-aa", "2")]);
  });

  test("outside the enabled jurisdictions, unknown, or another instrument named: not_found; no citation: validation_failed", () => {
    const db = server.deps.searchIndex.db;
    const org = server.createOrg({ jurisdictions: ["us"] });
    expect(refusal(() => findProvision(db, org.orgId, ["us"], "GDPR Article 33")).code).toBe("not_found");
    expect(refusal(() => findProvision(db, org.orgId, ["us"], "12 CFR 1003.99")).code).toBe("not_found");
    const eu = server.createOrg({ jurisdictions: ["eu"] });
    const other = refusal(() => findProvision(db, eu.orgId, ["eu"], "UK GDPR Article 33"));
    expect(other.code).toBe("not_found");
    expect(other.details).toContain("GDPR Article 33 is");
    expect(refusal(() => findProvision(db, eu.orgId, ["eu"], "breach notification")).code).toBe("validation_failed");
  });

  test("an article two instruments share: the one the citation spells out, or validation_failed naming both", async () => {
    const db = server.deps.searchIndex.db;
    const org = server.createOrg({ jurisdictions: ["eu"] });
    await indexDocument(server.deps, {
      documentId: "corpus:uk-gdpr-test",
      ownerOrgId: null,
      jurisdictions: ["eu"],
      passages: [{ source: "UK GDPR (retained Regulation (EU) 2016/679)", citationPath: "UK GDPR > Article 33 > 1", text: "The controller notifies the Commissioner.", position: 0 }],
    });
    try {
      expect(findProvision(db, org.orgId, ["eu"], "UK GDPR Article 33").passages.map((p) => p.content)).toEqual(["The controller notifies the Commissioner."]);
      expect(findProvision(db, org.orgId, ["eu"], "GDPR Article 33").citation).toBe("GDPR Article 33");
      expect(findProvision(db, org.orgId, ["eu"], "GDPR Article 33").source).toBe("Regulation (EU) 2016/679 (General Data Protection Regulation)");
      const both = refusal(() => findProvision(db, org.orgId, ["eu"], "Article 33", "arguments.citation"));
      expect(both.code).toBe("validation_failed");
      expect(both.details).toBe(
        'arguments.citation: "Article 33" names a provision of more than one instrument (GDPR Article 33; UK GDPR Article 33); name the instrument as shown',
      );
    } finally {
      deleteDocumentChunks(server.deps, "corpus:uk-gdpr-test");
    }
  });

  test("an organisation's own document is read only by that organisation", async () => {
    const db = server.deps.searchIndex.db;
    const owner = server.createOrg({ jurisdictions: ["eu"] });
    const stranger = server.createOrg({ jurisdictions: ["eu"] });
    await indexDocument(server.deps, {
      documentId: "acme-rules",
      ownerOrgId: owner.orgId,
      jurisdictions: ["eu"],
      passages: [{ source: "Acme Rulebook", citationPath: "Acme Rules § 77.7 > (a)", text: "Staff report breaches at once.", position: 0 }],
    });
    expect(findProvision(db, owner.orgId, ["eu"], "Acme Rules § 77.7").passages[0]!.content).toBe("Staff report breaches at once.");
    expect(refusal(() => findProvision(db, stranger.orgId, ["eu"], "Acme Rules § 77.7")).code).toBe("not_found");
  });
});

describe("provisionIndex", () => {
  test("every provision of every jurisdiction reads back through its own citation", () => {
    const org = server.createOrg({ jurisdictions: allSlugs });
    let total = 0;
    for (const slug of allSlugs) {
      const { provisions, truncated } = provisionIndex(server.deps.searchIndex.db, org.orgId, slug);
      expect(truncated).toBe(false);
      for (const entry of provisions) {
        const provision = findProvision(server.deps.searchIndex.db, org.orgId, [slug], entry.citation);
        expect(provision.citation).toBe(entry.citation);
        expect(provision.passages).toHaveLength(entry.passages);
        total++;
      }
    }
    expect(total).toBe(317);
    const gdpr = provisionIndex(server.deps.searchIndex.db, org.orgId, "eu").provisions;
    expect(gdpr[0]).toEqual({ citation: "GDPR Article 1", heading: expect.stringContaining("Subject-matter"), source: expect.any(String), passages: 1 });
  });

  test("a title shown in the path is not part of the citation", () => {
    expect(provisionCitation("GDPR > Article 17 (Right to erasure ('right to be forgotten')) > 3", "article 17")).toBe("GDPR Article 17");
    expect(provisionCitation("12 CFR 1003.4 (Compilation of loan data) > (b)–(c)", "1003.4")).toBe("12 CFR 1003.4");
    expect(provisionCitation("N.Y. Gen. Bus. Law § 899‑aa > 2", "899-aa")).toBe("N.Y. Gen. Bus. Law § 899‑aa");
  });
});
