import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Database } from "bun:sqlite";
import { rmSync } from "node:fs";
import { upsertJurisdiction } from "../../src/auth/store";
import { openDatabase } from "../../src/db/open";
import { createEmbedder } from "../../src/search/embedder/index";
import type { Embedder } from "../../src/search/embedder/types";
import { SearchIndex, type SearchDeps } from "../../src/search/search-index";
import { indexDocument, indexDocumentChunks, searchKnowledgeBase } from "../../src/search/service";
import { DEFAULT_SEARCH_TUNING } from "../../src/search/tuning";
import { ftsSearch } from "../../src/search/fts-store";
import { resolveSearchScope, scopeToken } from "../../src/search/scopes";
import { tempDir } from "../helpers/server";

// A search of the whole shared corpus leaves other organisations' passages out by the
// token every organisation passage carries. Rows written before that token existed get
// it before any search of a newly opened database reads them.
let dir: string;
let embedder: Embedder;
let first: Database;
let secretRowid: number;

const bm25 = (deps: SearchDeps, orgId: string, jurisdictions: string[]) =>
  searchKnowledgeBase(deps, { orgId, query: "zorblax playbook", jurisdictions, topK: 10 }, DEFAULT_SEARCH_TUNING, "bm25");

beforeAll(async () => {
  dir = tempDir();
  first = await openDatabase(dir);
  embedder = await createEmbedder({ kind: "static", timeoutMs: 30_000, batchTextsMax: 64 });
  const deps = { searchIndex: new SearchIndex(first, embedder) };
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

test("a newly opened database marks it before searching: other organisations never see it, its own does", async () => {
  const reopened = await openDatabase(dir);
  const deps = { searchIndex: new SearchIndex(reopened, embedder) };
  try {
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
