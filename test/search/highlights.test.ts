import { expect, test } from "bun:test";
import { loadSampleCorpus } from "../../src/search/corpus/import";
import { Lexicon } from "../../src/search/lexicon";
import { analyseQuery } from "../../src/search/rank/analyse";
import { highlightsOf } from "../../src/search/rank/highlights";
import { stemOf } from "../../src/search/text/tokens";
import questionsFile from "../search-quality/questions.json";
import { highlightsOf as highlightsByRegex } from "./fixtures/highlights-by-regex";

const filler = (n: number, word = "lorem") => Array.from({ length: n }, () => word).join(" ");

test("the snippet is the window where the most (and weightiest) distinct matched words sit together", () => {
  const content = `${filler(40)} breach once. ${filler(40)} notify the authority of a breach within 72 hours. ${filler(40)}`;
  const { snippet, terms } = highlightsOf(content, ["breach", "notifi", "author"].map((w) => stemOf(w)), []);
  expect(snippet).toContain("notify the authority of a breach within 72 hours");
  expect(snippet.startsWith("…")).toBe(true);
  expect(terms).toEqual(["breach", "notify", "authority"]);
});

test("of windows that weigh the same, the first is shown, whatever order the weights add up in", () => {
  // Weights whose float sums differ with the order they are added in: 0.05 + 0.1 + 1 = 1.15 but 1 + 0.05 + 0.1 = 1.1500000000000001.
  const expansions = [
    { text: "alpha", terms: ["alpha"], weight: 0.1, source: "glossary" as const },
    { text: "beta", terms: ["beta"], weight: 0.2, source: "glossary" as const },
  ];
  const content = `start alpha beta gamma ${filler(60)} gamma alpha beta ${filler(60)}`;
  const { snippet } = highlightsOf(content, ["gamma"], expansions);
  expect(snippet.startsWith("start alpha beta gamma")).toBe(true);
});

test("a passage with no matched word shows its beginning", () => {
  const { snippet, terms } = highlightsOf(`first words ${filler(80)}`, ["absent"], []);
  expect(snippet.startsWith("first words")).toBe(true);
  expect(terms).toEqual([]);
});

test("the highlights are those of the regular expression they were first found by, for every passage of the sample corpus", async () => {
  const passages = (await loadSampleCorpus()).passages.map((p) => p.text);
  const edges = ["Café naïve ﬁnancial § 1798.82(a) — ‘quoted’", "İstanbul ǅ 𝐀𝐁 x\u0301y e\u0301 \ud800lone 😀emoji 𝟗9", "ＦＵＬＬ width ＤＡＴＡ", ""];
  const lexicon = await Lexicon.load();
  const queries = questionsFile.questions.slice(0, 40).map((q) => analyseQuery(q.query, lexicon));
  // Each edge case's every word is a query term, so its terms list every word the tokeniser found.
  for (const content of edges) {
    const stems = [...content.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => stemOf(m[0].normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase()));
    expect(highlightsOf(content, stems, [])).toEqual(highlightsByRegex(content, stems, []));
  }
  let matched = 0;
  for (const [i, content] of passages.entries()) {
    const query = queries[i % queries.length]!;
    const got = highlightsOf(content, query.stems, query.expansions);
    expect(got).toEqual(highlightsByRegex(content, query.stems, query.expansions));
    matched += got.terms.length > 0 ? 1 : 0;
  }
  // The comparison means something only if most passages matched some words.
  expect(matched).toBeGreaterThan(passages.length / 2);
});

test("a passage highlighted again for another query (its words already read) gets that query's highlights", async () => {
  const passages = (await loadSampleCorpus()).passages.map((p) => p.text);
  const lexicon = await Lexicon.load();
  const queries = questionsFile.questions.slice(0, 40).map((q) => analyseQuery(q.query, lexicon));
  for (const [i, content] of passages.entries()) {
    for (const query of [queries[i % queries.length]!, queries[(i + 7) % queries.length]!]) {
      expect(highlightsOf(content, query.stems, query.expansions)).toEqual(highlightsByRegex(content, query.stems, query.expansions));
    }
  }
});
