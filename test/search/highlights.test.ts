import { expect, test } from "bun:test";
import { highlightsOf } from "../../src/search/rank/highlights";
import { stemOf } from "../../src/search/text/tokens";

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
