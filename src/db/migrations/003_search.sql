-- Knowledge-base passages: the shared corpus (owner_org_id NULL) and organisations'
-- uploaded documents (owner_org_id set). Indexed twice: search_fts (BM25) and vectors
-- (search_chunk_vectors, plus an int8 copy in the vec0 table search_vec, created by the
-- search service because its dimension comes from the configured embedder, recorded in
-- search_index_meta).
CREATE TABLE search_chunks (
  id INTEGER PRIMARY KEY,
  -- 'corpus:<key>' for shared-corpus instruments, the document uuid for uploads.
  document_id TEXT NOT NULL CHECK (length(document_id) BETWEEN 1 AND 200),
  owner_org_id TEXT REFERENCES organisations(id) ON DELETE CASCADE,
  position INTEGER NOT NULL CHECK (position >= 0),
  source TEXT NOT NULL CHECK (length(source) <= 1000),
  citation_path TEXT NOT NULL CHECK (length(citation_path) <= 1000),
  heading TEXT NOT NULL DEFAULT '' CHECK (length(heading) <= 1000),
  content TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 20000),
  -- JSON array of slugs; [] only for an organisation document that applies everywhere.
  jurisdiction_slugs TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(jurisdiction_slugs)),
  -- SHA-256 over everything above that is indexed: an unchanged passage is never re-embedded.
  content_hash TEXT NOT NULL,
  UNIQUE (document_id, position)
);
CREATE INDEX search_chunks_by_owner ON search_chunks (owner_org_id, document_id);

-- Full-precision embedding of each passage (little-endian float32), kept out of
-- search_chunks so re-scoring a shortlist never reads passage text.
CREATE TABLE search_chunk_vectors (
  chunk_id INTEGER PRIMARY KEY REFERENCES search_chunks(id) ON DELETE CASCADE,
  embedding BLOB NOT NULL
);

-- One row per (passage, vector scope): the vec0 partition a passage lives in. Shared
-- passages use their jurisdiction slug; organisation passages use 'org:<id>:<slug>', or
-- 'org:<id>:*' when the document has no jurisdictions. vec_rowid is the search_vec rowid.
CREATE TABLE search_chunk_scopes (
  vec_rowid INTEGER PRIMARY KEY,
  chunk_id INTEGER NOT NULL REFERENCES search_chunks(id) ON DELETE CASCADE,
  scope TEXT NOT NULL
);
CREATE INDEX search_chunk_scopes_by_chunk ON search_chunk_scopes (chunk_id);
CREATE INDEX search_chunk_scopes_by_scope ON search_chunk_scopes (scope, chunk_id);

-- Normalised citation keys ("article 33", "article 33(1)", "899-aa", "1798.82(a)") so a
-- query that cites a provision finds it exactly.
CREATE TABLE search_citation_keys (
  citation_key TEXT NOT NULL,
  chunk_id INTEGER NOT NULL REFERENCES search_chunks(id) ON DELETE CASCADE,
  PRIMARY KEY (citation_key, chunk_id)
) WITHOUT ROWID;
CREATE INDEX search_citation_keys_by_chunk ON search_citation_keys (chunk_id);

-- BM25 over three fields: citation (jurisdiction name, source, citation path), heading and
-- body. A fourth, scopes, holds one opaque token per vector scope (see store.scopeToken):
-- a search ANDs its scopes into the MATCH, so passages it may not see are never scored;
-- its bm25 weight is 0. Contentless: the text lives in search_chunks; rowid = search_chunks.id.
CREATE VIRTUAL TABLE search_fts USING fts5(
  citation, heading, body, scopes,
  content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Inverted-file centroids of the shared corpus's vectors (see src/search/ivf.ts): cluster
-- n >= 1 is search_vec's cluster partition n; partition 0 holds vectors scanned whole
-- (organisations' passages, and every passage while the corpus is too small to cluster).
-- centroid: little-endian float32. Empty until the shared corpus first reaches the
-- clustering threshold; rebuilt when it has grown enough for a new cluster count.
CREATE TABLE search_ivf_centroids (
  cluster INTEGER PRIMARY KEY CHECK (cluster >= 1),
  centroid BLOB NOT NULL
);

-- embedder_id and dimensions the vectors in search_vec were made with; ivf_vectors, the
-- shared vectors counted when the centroids were trained.
CREATE TABLE search_index_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
