import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { upsertJurisdiction } from "../../src/auth/store";
import { openDatabase } from "../../src/db/open";
import type { Embedder } from "../../src/search/embedder/types";
import { ftsSearch } from "../../src/search/fts-store";
import { indexDocument, indexDocumentChunks } from "../../src/search/indexing";
import { resolveSearchScope, scopeToken } from "../../src/search/scopes";
import { SearchIndex, type SearchDeps } from "../../src/search/search-index";
import { searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { maintain, readySearchIndex, staticEmbedder } from "../helpers/search-index";
import { tempDir } from "../helpers/server";

// A search of the whole shared corpus leaves other organisations' passages out by the
// token every organisation passage carries. Rows written before that token existed get it
// from maintenance; until then no search reads them.
let dir: string;
let embedder: Embedder;
let first: Database;
let secretRowid: number;

const bm25 = (deps: SearchDeps, orgId: string, jurisdictions: string[]) =>
  searchKnowledgeBase(deps, { orgId, query: "zorblax playbook", jurisdictions, topK: 10 }, DEFAULT_SEARCH_TUNING, "bm25");

beforeAll(async () => {
  dir = tempDir();
  first = await openDatabase(dir);
  embedder = await staticEmbedder();
  const deps = { searchIndex: await readySearchIndex(first, embedder) };
  for (const slug of ["eu", "us-ny"]) upsertJurisdiction(first, { slug, name: slug, description: slug });
  for (const id of ["org-a", "org-b"]) first.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, ?, 0)").run(id, id);
  await indexDocument(deps, {
    documentId: "corpus:shared",
    ownerOrgId: null,
    jurisdictions: ["eu", "us-ny"],
    passages: [{ source: "Shared Act", citationPath: "Shared Act > 1", text: "A zorblax playbook is public guidance.", position: 0 }],
  });
  await indexDocumentChunks(deps, {
    documentId: "doc-a",
    orgId: "org-a",
    jurisdictions: ["us-ny"],
    source: "secret.pdf",
    chunks: [{ text: "Zorblax playbook: org A's confidential escalation tree.", citationPath: "secret.pdf#page=1", position: 0 }],
  });
  secretRowid = first.query<{ id: number }, []>("SELECT id FROM search_chunks WHERE document_id = 'doc-a'").get()!.id;
  // The row as an earlier version wrote it: its scope token only, and no mark of it done.
  first.query("DELETE FROM search_fts WHERE rowid = ?").run(secretRowid);
  first
    .query("INSERT INTO search_fts (rowid, citation, heading, body, scopes) VALUES (?, 'New York us-ny secret.pdf', '', ?, ?)")
    .run(secretRowid, "Zorblax playbook: org A's confidential escalation tree.", scopeToken("org:org-a:us-ny"));
  first.query("DELETE FROM search_index_meta WHERE key = 'fts_organisation_token'").run();
});

afterAll(() => {
  first.close();
  rmSync(dir, { recursive: true, force: true });
});

test("an unmarked organisation row would show through a whole-corpus search", () => {
  const hits = ftsSearch(first, '"zorblax"', resolveSearchScope(first, "org-b", ["eu", "us-ny"]), DEFAULT_SEARCH_TUNING.fts, 10);
  expect(hits.map((h) => h.chunkId)).toContain(secretRowid);
});

test("a newly opened database refuses searches until maintenance marks it: then other organisations never see it, its own does", async () => {
  const reopened = await openDatabase(dir);
  const deps = { searchIndex: new SearchIndex(reopened, embedder) };
  try {
    await expect(bm25(deps, "org-b", ["eu", "us-ny"])).rejects.toThrow("the search index needs maintenance (organisation passages are not marked yet)");
    expect(await maintain(deps.searchIndex)).toEqual({ markedPassages: 1 });
    const stranger = await bm25(deps, "org-b", ["eu", "us-ny"]);
    expect(stranger.map((r) => r.content)).toEqual(["A zorblax playbook is public guidance."]);
    const owner = await bm25(deps, "org-a", ["eu", "us-ny"]);
    expect(owner.map((r) => r.source).sort()).toEqual(["Shared Act", "secret.pdf"]);
    expect((await bm25(deps, "org-a", ["eu"])).map((r) => r.source)).toEqual(["Shared Act"]);
    expect(reopened.query("SELECT value FROM search_index_meta WHERE key = 'fts_organisation_token'").get()).toEqual({ value: "1" });
  } finally {
    reopened.close();
  }
});
