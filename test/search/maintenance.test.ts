import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { importSampleCorpus } from "../../src/search/corpus/import";
import type { Embedder } from "../../src/search/embedder/types";
import { indexDocument } from "../../src/search/indexing";
import { maintainSearchIndex, reembedAll } from "../../src/search/maintenance";
import { SearchIndex } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { maintain, staticEmbedder } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// Index upgrades happen in maintenance only (regkb serve runs it before listening); a search
// or an import on an index that needs one refuses it, naming what is due.
let dir: string;
let db: Database;
let embedder: Embedder;
let all: string[];

const ARTICLE_33 = "GDPR > Article 33 (Notification of a personal data breach to the supervisory authority) > 1–2";
const quiet = createLogger("silent");
/** What a restart sees: a new connection's index, with nothing checked yet. */
const restarted = () => new SearchIndex(db, embedder);
const topVectorMatch = async (searchIndex: SearchIndex) =>
  (await searchKnowledgeBase({ searchIndex }, { orgId: "org-a", query: "notify the supervisory authority of a breach", jurisdictions: ["eu"], topK: 1 }, DEFAULT_SEARCH_TUNING, "vector"))[0]?.citationPath;

beforeAll(async () => {
  dir = tempDir();
  db = await openDatabase(dir);
  embedder = await staticEmbedder();
  const fresh = restarted();
  // A new database: nothing may be written or searched before maintenance prepares it.
  await expect(importSampleCorpus({ searchIndex: fresh })).rejects.toThrow(
    "the search index needs maintenance (no embedder is recorded for it yet): run `regkb corpus maintain`",
  );
  expect(await maintain(fresh)).toEqual({});
  await importSampleCorpus({ searchIndex: fresh });
  all = db.query<{ slug: string }, []>("SELECT slug FROM jurisdictions").all().map((r) => r.slug);
  db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES ('org-a', 'A', 0)").run();
});

afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("with nothing due, maintenance changes nothing and reports nothing", async () => {
  const searchIndex = restarted();
  expect(searchIndex.maintenanceDue()).toBeUndefined();
  expect(await maintain(searchIndex)).toEqual({});
  expect(await topVectorMatch(searchIndex)).toStartWith(ARTICLE_33);
});

test("another embedder's index: searches and imports refuse it; an external embedder leaves the re-embed to the operator", async () => {
  db.query("UPDATE search_index_meta SET value = 'some-other-model' WHERE key = 'embedder_id'").run();
  const searchIndex = restarted();
  const due = /needs maintenance \(it was built with embedder some-other-model \(256-d\) but regkb-static-\S+ \(256-d\) is configured\)/;
  await expect(topVectorMatch(searchIndex)).rejects.toThrow(due);
  await expect(indexDocument({ searchIndex }, { documentId: "corpus:x", ownerOrgId: null, jurisdictions: ["eu"], passages: [] })).rejects.toThrow(due);
  await expect(maintainSearchIndex({ searchIndex, config: { embedder: { kind: "openai" } }, log: quiet })).rejects.toThrow(
    /^the search index was built with embedder some-other-model .* is configured; run `regkb corpus re-embed`$/,
  );
  const { chunks } = await reembedAll(searchIndex);
  expect(chunks).toBeGreaterThan(700);
  expect(await maintain(searchIndex)).toEqual({});
  expect(await topVectorMatch(searchIndex)).toStartWith(ARTICLE_33);
  expect((await searchKnowledgeBase({ searchIndex }, { orgId: "org-a", query: "Article 33", jurisdictions: all, topK: 1 }))[0]!.citationPath).toStartWith(ARTICLE_33);
});

test("a built-in embedder's index is re-embedded by maintenance itself", async () => {
  db.query("UPDATE search_index_meta SET value = 'regkb-static-v1-256-c5c53b64' WHERE key = 'embedder_id'").run();
  const searchIndex = restarted();
  const report = await maintain(searchIndex);
  expect(report.reembeddedPassages).toBeGreaterThan(700);
  expect(Object.keys(report)).toEqual(["reembeddedPassages"]);
  expect(await topVectorMatch(searchIndex)).toStartWith(ARTICLE_33);
});

test("a re-embed that did not finish is detected and repeated, not taken for an empty index", async () => {
  const interrupted = restarted();
  // Stop a re-embed after its first step: the vectors are gone, and so is the record of the embedder.
  const stop = new Error("interrupted");
  const failing: Embedder = { id: embedder.id, dimensions: embedder.dimensions, shortlistDimensions: embedder.shortlistDimensions, embed: () => Promise.reject(stop) };
  await expect(reembedAll(new SearchIndex(db, failing))).rejects.toBe(stop);
  await expect(maintainSearchIndex({ searchIndex: interrupted, config: { embedder: { kind: "openai" } }, log: quiet })).rejects.toThrow(
    "the search index holds passages but records no embedder (an interrupted re-embed); run `regkb corpus re-embed`",
  );
  const report = await maintain(interrupted);
  expect(report.reembeddedPassages).toBeGreaterThan(700);
  expect(await topVectorMatch(interrupted)).toStartWith(ARTICLE_33);
});
