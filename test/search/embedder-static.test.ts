import { describe, expect, test } from "bun:test";
import { StaticEmbedder, STATIC_TEXT_CHARS_MAX } from "../../src/search/embedder/static.ts";
import { decodeStaticTable, encodeStaticTable, staticTableContentHash } from "../../src/search/embedder/static-table.ts";
import { stem, wordsOf } from "../../src/search/embedder/tokens.ts";
import { dot } from "../../src/search/embedder/vector.ts";
import tablePath from "../../data/embeddings/regkb-static-v2.bin" with { type: "file" };

const embedder = await StaticEmbedder.load();

function norm(v: Float32Array): number {
  return Math.sqrt(dot(v, v));
}

describe("StaticEmbedder", () => {
  test("id and dimensions come from the shipped table", () => {
    expect(embedder.id).toMatch(new RegExp(`^regkb-static-v2-${embedder.dimensions}-[0-9a-f]{8}$`));
    expect(embedder.dimensions).toBeGreaterThanOrEqual(64);
  });

  test("vectors are unit length and deterministic", async () => {
    const texts = ["Notification of a personal data breach to the supervisory authority", "12 CFR 1003.4 compilation of loan data"];
    const first = await embedder.embed(texts);
    const second = await new StaticEmbedder(decodeStaticTable(await Bun.file(tablePath).bytes())).embed(texts);
    for (const [i, v] of first.entries()) {
      expect(v.length).toBe(embedder.dimensions);
      expect(norm(v)).toBeCloseTo(1, 5);
      expect([...v]).toEqual([...second[i]!]);
    }
  });

  test("ranks a paraphrase above unrelated regulatory text", async () => {
    const cases: [string, string, string][] = [
      [
        "The controller shall notify the supervisory authority of a personal data breach within 72 hours.",
        "A company has to report a leak of customer data to the regulator within three days.",
        "Each financial institution shall record the ethnicity, race and sex of mortgage applicants.",
      ],
      [
        "right to have my personal data deleted",
        "The data subject shall have the right to obtain from the controller the erasure of personal data concerning him or her.",
        "The attorney general may bring an action in the name of the state to enforce this section.",
      ],
    ];
    for (const [query, paraphrase, unrelated] of cases) {
      const [q, p, u] = await embedder.embed([query, paraphrase, unrelated]);
      expect(dot(q!, p!)).toBeGreaterThan(dot(q!, u!) + 0.1);
    }
  });

  test("plain questions find the provision that uses other words", async () => {
    // What the trained table adds over the distilled one (which ranked these answers 256th, 4th and 34th of 785).
    const dir = `${import.meta.dir}/../../data/corpus`;
    const names = new Map(((await Bun.file(`${dir}/jurisdictions.json`).json()) as { slug: string; name: string }[]).map((j) => [j.slug, j.name]));
    const passages = (await Bun.file(`${dir}/passages.jsonl`).text())
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as { citationPath: string; heading: string; text: string; jurisdictions: string[] });
    // The text the search service embeds for a passage (embeddingText in src/search/service.ts).
    const vectors = await embedder.embed(passages.map((p) => [p.jurisdictions.map((s) => names.get(s)).join(", "), p.heading, p.text].join("\n")));
    const cases: [string, RegExp][] = [
      ["my online shop got hacked, do we have to tell the regulator", /^GDPR > Article 33\b/],
      ["can I make a company erase everything it has on me", /^GDPR > Article 17\b/],
      ["sending personal info outside Europe", /^GDPR > Article 4[4-9]\b/],
    ];
    for (const [query, answer] of cases) {
      const [q] = await embedder.embed([query]);
      const ranked = vectors.map((v, i) => ({ i, score: dot(q!, v) })).sort((a, b) => b.score - a.score);
      const rank = ranked.findIndex((r) => answer.test(passages[r.i]!.citationPath)) + 1;
      expect({ query, rank: rank <= 5 ? "top 5" : rank }).toEqual({ query, rank: "top 5" });
    }
  });

  test("dimensions are principal components, largest variance first", async () => {
    // The vector index shortlists on the first 128 dimensions (PCA_SHORTLIST_DIMENSIONS).
    const lines = (await Bun.file(`${import.meta.dir}/../../data/corpus/passages.jsonl`).text()).split("\n").filter((l) => l !== "");
    const vectors = await embedder.embed(lines.map((l) => (JSON.parse(l) as { text: string }).text));
    const variance = Array.from({ length: embedder.dimensions }, (_, d) => {
      const mean = vectors.reduce((s, v) => s + v[d]!, 0) / vectors.length;
      return vectors.reduce((s, v) => s + (v[d]! - mean) ** 2, 0) / vectors.length;
    });
    const total = variance.reduce((a, b) => a + b, 0);
    const leading = variance.slice(0, embedder.shortlistDimensions).reduce((a, b) => a + b, 0);
    expect(embedder.shortlistDimensions).toBe(128);
    expect(leading / total).toBeGreaterThan(0.8);
    // Decreasing block by block (within a block, sampling noise may swap neighbours).
    const blocks = Array.from({ length: embedder.dimensions / 32 }, (_, b) => variance.slice(b * 32, (b + 1) * 32).reduce((x, y) => x + y, 0));
    for (let b = 1; b < blocks.length; b++) expect(blocks[b]!).toBeLessThan(blocks[b - 1]!);
  });

  test("inflections share a vector and unknown words still embed", async () => {
    const [a, b, unknown] = await embedder.embed(["breaches notified", "breach notifying", "zyxwvutsrqp"]);
    expect(dot(a!, b!)).toBeCloseTo(1, 5);
    expect(norm(unknown!)).toBeCloseTo(1, 5);
  });

  test("empty, symbol-only, unicode and huge inputs give unit vectors", async () => {
    const huge = "personal data breach notification ".repeat(20_000);
    expect(huge.length).toBeGreaterThan(STATIC_TEXT_CHARS_MAX);
    const vectors = await embedder.embed(["", "§§ ?!", "Überprüfung der Datenschutzverletzung 数据泄露 🙂", huge]);
    for (const v of vectors) {
      expect(norm(v)).toBeCloseTo(1, 5);
      expect(v.every(Number.isFinite)).toBe(true);
    }
    expect(await embedder.embed([])).toEqual([]);
  });
});

describe("static table format", () => {
  test("the shipped table's id ends with the hash of its content, and a changed row changes it", async () => {
    const table = decodeStaticTable(new Uint8Array(await Bun.file(tablePath).arrayBuffer()));
    const hash = staticTableContentHash(table.words, table.rowScales, table.rows);
    expect(table.header.id).toEndWith(`-${hash}`);
    const rows = table.rows.slice();
    rows[0] = rows[0] === 0 ? 1 : 0;
    expect(staticTableContentHash(table.words, table.rowScales, rows)).not.toBe(hash);
  });
  test("round-trips and rejects corruption", async () => {
    const bytes = await Bun.file(tablePath).bytes();
    const table = decodeStaticTable(bytes);
    expect(encodeStaticTable(table)).toEqual(bytes);
    expect(() => decodeStaticTable(bytes.subarray(0, bytes.length - 1))).toThrow(/corrupt/);
    const badMagic = bytes.slice(0, 64);
    badMagic[0] = 0;
    expect(() => decodeStaticTable(badMagic)).toThrow(/bad magic/);
  });
});

describe("tokens", () => {
  test("stemmer undoes inflection only", () => {
    expect(["notifies", "notified", "notifying", "notify"].map(stem)).toEqual(["notifi", "notifi", "notifi", "notifi"]);
    expect(["breaches", "processing", "controllers", "general"].map(stem)).toEqual(["breach", "process", "controller", "general"]);
    expect(stem("1798")).toBe("1798");
  });

  test("words are lower-cased letter and digit runs without the possessive s", () => {
    expect(wordsOf("The driver’s licence, § 899-aa")).toEqual(["the", "driver", "licence", "899", "aa"]);
  });
});
