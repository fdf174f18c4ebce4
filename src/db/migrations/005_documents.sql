-- Organisations' uploaded policy PDFs. The file lives at <dataDir>/documents/<org_id>/<id>.pdf;
-- its passages live in search_chunks (document_id = documents.id). A deleted document's
-- row is removed outright (the ledger keeps the charge; nothing here is needed for money).
CREATE TABLE documents (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  filename TEXT NOT NULL CHECK (length(filename) BETWEEN 1 AND 255),
  status TEXT NOT NULL CHECK (status IN ('processing', 'ready', 'failed')),
  -- JSON array of slugs; [] means the document applies to every search of its organisation.
  jurisdiction_slugs TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(jurisdiction_slugs)),
  pages INTEGER NOT NULL CHECK (pages BETWEEN 1 AND 500),
  size_bytes INTEGER NOT NULL CHECK (size_bytes > 0),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64),
  credits_charged_pence INTEGER NOT NULL CHECK (credits_charged_pence >= 0),
  -- The document_ingest run that turns the file into searchable passages.
  run_id TEXT NOT NULL UNIQUE,
  chunk_count INTEGER CHECK (chunk_count IS NULL OR chunk_count >= 0),
  error TEXT CHECK (error IS NULL OR length(error) <= 1000),
  created_at_ms INTEGER NOT NULL,
  completed_at_ms INTEGER
);
CREATE INDEX documents_by_org ON documents (org_id, created_at_ms DESC, id DESC);
