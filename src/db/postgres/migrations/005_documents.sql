-- PostgreSQL twin of src/db/migrations/005_documents.sql: organisations' uploaded policy
-- PDFs. SQLite's install keeps the file at <dataDir>/documents/<org_id>/<id>.pdf; here the
-- bytes live in document_files, so every node reads the same file with no shared directory.
-- A deleted document's rows are removed outright (the ledger keeps the charge).
CREATE TABLE documents (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  filename TEXT NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
  status TEXT NOT NULL CHECK (status IN ('processing', 'ready', 'failed')),
  -- JSON array of slugs; [] means the document applies to every search of its organisation.
  jurisdiction_slugs TEXT NOT NULL DEFAULT '[]' CHECK (regkb_json_valid(jurisdiction_slugs)),
  pages INTEGER NOT NULL CHECK (pages BETWEEN 1 AND 500),
  size_bytes BIGINT NOT NULL CHECK (size_bytes > 0),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  credits_charged_pence BIGINT NOT NULL CHECK (credits_charged_pence >= 0),
  -- The document_ingest run that turns the file into searchable passages.
  run_id TEXT NOT NULL UNIQUE,
  chunk_count INTEGER CHECK (chunk_count IS NULL OR chunk_count >= 0),
  error TEXT CHECK (error IS NULL OR length(error) <= 1000),
  created_at_ms BIGINT NOT NULL,
  completed_at_ms BIGINT
);
CREATE INDEX documents_by_org ON documents (org_id, created_at_ms DESC, id DESC);

-- The PDF itself, kept apart so listing documents never reads it. A bytea value holds at
-- most 1 GB. EXTERNAL: stored out of line uncompressed, as a PDF's streams are compressed already.
CREATE TABLE document_files (
  document_id TEXT PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
  pdf BYTEA NOT NULL CHECK (octet_length(pdf) > 0)
);
ALTER TABLE document_files ALTER COLUMN pdf SET STORAGE EXTERNAL;
