import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { citationKeysOfPath, citationsInQuery } from "../../src/search/citations";
import { loadSampleCorpus } from "../../src/search/corpus/import";
import { buildSampleCorpus } from "../../src/search/corpus/sample-sources";
import { PASSAGE_WORDS_MAX, untitledPath, wordCount } from "../../src/search/corpus/structure";
import { ftsMatchExpression } from "../../src/search/query-text";

const SOURCES = join(import.meta.dir, "../../../shared/corpus");

describe("sample corpus", async () => {
  const shipped = await loadSampleCorpus();

  test("data/corpus is what scripts/build-sample-corpus.ts makes from ../shared/corpus", async () => {
    const rebuilt = await buildSampleCorpus(SOURCES);
    expect(rebuilt.jurisdictions).toEqual(shipped.jurisdictions);
    expect(rebuilt.passages).toEqual(shipped.passages);
  });

  test("covers GDPR, 12 CFR 1003 and 50 state statutes, each jurisdiction named and described", () => {
    const slugs = shipped.jurisdictions.map((j) => j.slug);
    expect(slugs).toHaveLength(52);
    for (const slug of ["eu", "us", "us-ny", "us-ca", "us-dc", "us-gu", "us-vi"]) expect(slugs).toContain(slug);
    for (const j of shipped.jurisdictions) {
      expect(j.name.length).toBeGreaterThan(1);
      expect(j.description.length).toBeGreaterThan(10);
      expect(shipped.passages.some((p) => p.jurisdictions.includes(j.slug))).toBe(true);
    }
  });

  test("passages follow legal structure and stay within the size bound", () => {
    const paths = shipped.passages.map((p) => untitledPath(p.citationPath));
    expect(paths).toContain("GDPR > Article 33 > 1–2");
    expect(paths).toContain("N.Y. Gen. Bus. Law § 899-aa > 2");
    expect(paths).toContain("12 CFR 1003.4 > (d)");
    expect(paths.some((p) => p.startsWith("Cal. Civ. Code § 1798.82 > (a)"))).toBe(true);
    for (const p of shipped.passages) expect(wordCount(p.text)).toBeLessThanOrEqual(PASSAGE_WORDS_MAX);
    const ny = shipped.passages.find((p) => untitledPath(p.citationPath) === "N.Y. Gen. Bus. Law § 899-aa > 2")!;
    expect(ny.source).toBe("New York data breach notification law (N.Y. Gen. Bus. Law § 899-aa)");
    expect(ny.jurisdictions).toEqual(["us-ny"]);
  });
});

describe("titles", async () => {
  const shipped = await loadSampleCorpus();
  test("every GDPR article, CFR section and titled state section shows its title in the citation path", () => {
    const path = (untitled: string) => shipped.passages.find((p) => untitledPath(p.citationPath) === untitled);
    expect(path("GDPR > Article 17 > 2–3")).toMatchObject({
      citationPath: "GDPR > Article 17 (Right to erasure (‘right to be forgotten’)) > 2–3",
      title: "Right to erasure (‘right to be forgotten’)",
    });
    expect(path("12 CFR 1003.4 > (d)")).toMatchObject({ citationPath: "12 CFR 1003.4 (Compilation of loan data) > (d)", title: "Compilation of loan data" });
    expect(path("12 CFR Part 1003, Supp. I > 1003.4 > 4(a)(1)")?.citationPath).toBe("12 CFR Part 1003, Supp. I > 1003.4 (Compilation of Loan Data) > 4(a)(1)");
    expect(path("Ohio Rev. Code Ann. § 1349.19 > (B)")?.citationPath).toBe(
      "Ohio Rev. Code Ann. § 1349.19 (Private disclosure of security breach of computerized personal information data) > (B)",
    );
    for (const p of shipped.passages.filter((p) => p.document === "eu-gdpr")) expect(p.title).toBeTruthy();
  });

  test("a definitions list gives each defined term a passage of its own, however short", () => {
    const of = (prefix: string) => shipped.passages.filter((p) => p.citationPath.startsWith(prefix));
    expect(of("GDPR > Article 4 (").map((p) => p.citationPath)).toEqual(Array.from({ length: 26 }, (_, i) => `GDPR > Article 4 (Definitions) > (${i + 1})`));
    expect(of("GDPR > Article 4 (Definitions) > (1)")[0]!.text).toStartWith("(1) ‘personal data’ means any information");
    // "group of undertakings" is 12 words: still alone, not merged with its neighbours.
    expect(of("GDPR > Article 4 (Definitions) > (19)")[0]!.text).toBe("(19) ‘group of undertakings’ means a controlling undertaking and its controlled undertakings;");
    expect(of("12 CFR 1003.2 (Definitions) > Act")[0]!.text).toStartWith("Act means the Home Mortgage Disclosure Act");
    expect(of("12 CFR 1003.2 (Definitions) > ").every((p) => !/–/.test(untitledPath(p.citationPath)))).toBe(true);
  });

  test("a long provision cut into windows keeps its title after the provision, not after the window", () => {
    const path = (untitled: string) => shipped.passages.find((p) => untitledPath(p.citationPath) === untitled)?.citationPath;
    expect(path("12 CFR Part 1003, App. A > I.B > 1")).toBe("12 CFR Part 1003, App. A > I.B (Action Taken) > 1");
    expect(path("GDPR > Article 6 > 1")).toBe("GDPR > Article 6 (Lawfulness of processing) > 1");
    // Wherever a title shows, it is the provision's, and the subdivisions follow it.
    for (const p of shipped.passages.filter((p) => p.title !== "")) {
      const after = p.citationPath.split(` (${p.title})`)[1];
      expect(after === undefined || after === "" || after.startsWith(" > "), p.citationPath).toBe(true);
    }
  });

  test("a title is never read as a subdivision: citation keys and untitled paths ignore it", () => {
    expect(untitledPath("GDPR > Article 17 (Right to erasure (‘right to be forgotten’)) > 3")).toBe("GDPR > Article 17 > 3");
    expect(untitledPath("GDPR > Article 4 (Definitions) > (1)–(6)")).toBe("GDPR > Article 4 > (1)–(6)");
    expect(untitledPath("12 CFR Part 1003, Supp. I > 1003.4 (Compilation of Loan Data) > 4(a)(10) > 6–8")).toBe("12 CFR Part 1003, Supp. I > 1003.4 > 4(a)(10) > 6–8");
    expect(citationKeysOfPath("Ind. Code § 24-4.9-2-2 (\"Breach of the security of data\") > (a)–(b)")).toEqual(["24-4.9-2-2", "24-4.9-2-2(a)", "24-4.9-2-2(b)"]);
    expect(citationKeysOfPath("GDPR > Article 4 (Definitions) > (1)–(2)")).toEqual(["article 4", "article 4(1)", "article 4(2)"]);
  });
});

describe("citation keys", () => {
  test("a citation path gives its provision and each subdivision it covers", () => {
    expect(citationKeysOfPath("GDPR > Article 33 > 1–2")).toEqual(["article 33", "article 33(1)", "article 33(2)"]);
    expect(citationKeysOfPath("N.Y. Gen. Bus. Law § 899-aa > 1 > (a)–(b)")).toEqual(["899-aa", "899-aa(1)", "899-aa(1)(a)", "899-aa(1)(b)"]);
    expect(citationKeysOfPath("12 CFR 1003.4 > (a) > (1)–(2)")).toEqual(["1003.4", "1003.4(a)", "1003.4(a)(1)", "1003.4(a)(2)"]);
    expect(citationKeysOfPath("12 CFR Part 1003, App. A > I.A > 1–5")).toEqual([]);
  });

  test("a query's citations reduce to the same keys", () => {
    expect(citationsInQuery("Art. 33(1)")).toEqual([{ keys: ["article 33", "article 33(1)"] }]);
    expect(citationsInQuery("what does § 899-aa(2) say")).toEqual([{ keys: ["899-aa", "899-aa(2)"] }]);
    expect(citationsInQuery("Cal. Civ. Code 1798.82")).toEqual([{ keys: ["1798.82"] }]);
    expect(citationsInQuery("notify within 72 hours")).toEqual([]);
  });

  test("FTS expressions quote every term, so user text is never FTS syntax", () => {
    expect(ftsMatchExpression('breach NOT "notice" OR *')).toBe('"breach" OR "notice"');
    expect(ftsMatchExpression("§ 1798.82 data breach")).toBe('"1798.82" OR "data" OR "breach" OR "1798.82 data" OR "data breach"');
    expect(ftsMatchExpression("the of a")).toBeUndefined();
  });

  test("common terms are left out of the OR, or all required when nothing else is left", () => {
    const common = new Set(["personal", "data", "breach"]);
    const isCommon = (t: string) => common.has(t);
    expect(ftsMatchExpression("personal data breach notice", isCommon)).toBe('"notice" OR "breach notice"');
    expect(ftsMatchExpression("definition of personal data breach", isCommon)).toBe('"definition"');
    expect(ftsMatchExpression("personal data breach", isCommon)).toBe('"personal" AND "data" AND "breach"');
  });
});
