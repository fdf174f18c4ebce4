import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { EXPANSION_SOURCES, Lexicon } from "../../src/search/lexicon";
import { stemOf, wordTokens } from "../../src/search/text/tokens";

const root = join(import.meta.dir, "../..");
const lexicon = await Lexicon.load();
const words = (q: string) => wordTokens(q);

describe("the glossary", () => {
  test("every line names its source and its legal side occurs in the corpus (scripts/lexicon/check-glossary.ts)", () => {
    const run = Bun.spawnSync([process.execPath, join(root, "scripts/lexicon/check-glossary.ts")], { stdout: "pipe", stderr: "pipe" });
    expect(run.stderr.toString() + run.stdout.toString()).toContain("OK");
    expect(run.exitCode).toBe(0);
  });
});

describe("the shipped lexicon (data/lexicon/expansions.tsv)", async () => {
  const lines = (await Bun.file(join(root, "data/lexicon/expansions.tsv")).text()).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  const glossary = (await Bun.file(join(root, "data/lexicon/glossary.tsv")).text())
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => l.split("\t").map((c) => c.trim().toLowerCase()));
  const key = (phrase: string) => wordTokens(phrase).map(stemOf).join(" ");
  const glossaryPairs = new Set(glossary.flatMap(([plain, legal]) => [`${key(plain!)}\t${legal}`, `${key(legal!)}\t${plain}`]));

  test("every expansion names one of the sources and weighs less than the user's own word", () => {
    expect(lines.length).toBeGreaterThan(5_000);
    for (const line of lines) {
      const [k, target, weight, source] = line.split("\t");
      expect(k!.length).toBeGreaterThan(0);
      expect(target!.length).toBeGreaterThan(0);
      expect(Number(weight)).toBeGreaterThan(0);
      expect(Number(weight)).toBeLessThan(1);
      expect(EXPANSION_SOURCES as readonly string[]).toContain(source!);
    }
  });

  test("every glossary expansion traces back to a reviewed glossary line", () => {
    const fromGlossary = lines.filter((l) => l.endsWith("\tglossary"));
    expect(fromGlossary.length).toBeGreaterThan(1_000);
    for (const line of fromGlossary) {
      const [k, target] = line.split("\t");
      expect(glossaryPairs.has(`${k}\t${target}`)).toBe(true);
    }
  });
});

describe("expansion", () => {
  test("everyday words reach the statutes' words, phrases included", () => {
    const texts = (q: string) => lexicon.expand(words(q)).map((e) => e.text);
    expect(texts("can I sue them")).toEqual(expect.arrayContaining(["compensation"]));
    expect(texts("is my ip address personal data")).toEqual(expect.arrayContaining(["online identifier"]));
    expect(texts("my boss reads my email")).toEqual(expect.arrayContaining(["employment context"]));
  });

  test("what the query already says is not added again, and a query keeps at most 24 expansions", () => {
    const expansions = lexicon.expand(words("compensation for damage caused by a controller that processed data unlawfully and a processor"));
    expect(expansions.map((e) => e.text)).not.toContain("compensation");
    expect(expansions.length).toBeLessThanOrEqual(24);
  });

  test("sources can be switched off one by one (how each one's contribution is measured)", () => {
    const onlyGlossary = lexicon.expand(words("can I sue them"), new Set(["glossary"]));
    expect(onlyGlossary.length).toBeGreaterThan(0);
    expect(onlyGlossary.every((e) => e.source === "glossary")).toBe(true);
    expect(lexicon.expand(words("can I sue them"), new Set())).toEqual([]);
  });
});
