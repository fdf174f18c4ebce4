import { expect, test } from "bun:test";
import { UseLiteEmbedder } from "../../src/search/embedder/use-lite.ts";
import { dot } from "../../src/search/embedder/vector.ts";

// One test: loading the model takes about a second, so it is loaded once and checked here.
test("USE-lite loads from embedded files and separates paraphrase from unrelated text", async () => {
  const embedder = await UseLiteEmbedder.load();
  expect([embedder.id, embedder.dimensions]).toEqual(["use-lite-512", 512]);
  const [query, paraphrase, unrelated, empty] = await embedder.embed([
    "The controller shall notify the supervisory authority of a personal data breach within 72 hours.",
    "A data breach must be reported to the regulator within three days.",
    "The mortgage lender records loan application data.",
    "",
  ]);
  for (const v of [query!, paraphrase!, unrelated!, empty!]) expect(dot(v, v)).toBeCloseTo(1, 4);
  expect(dot(query!, paraphrase!)).toBeGreaterThan(dot(query!, unrelated!) + 0.2);
});
