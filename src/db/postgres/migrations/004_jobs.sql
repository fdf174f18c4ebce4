-- PostgreSQL twin of src/db/migrations/004_jobs.sql: durable background runs (screenings,
-- document ingestion, executions). A worker owns a running run through a lease it keeps
-- renewing; a lease that expires means its worker died, and the run returns to pending (or
-- fails after max attempts). Screenings keep their request in input_json and results in output_json.
CREATE TABLE runs (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id),
  kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 64),
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'completed', 'failed')),
  input_json TEXT NOT NULL CHECK (regkb_json_valid(input_json)),
  output_json TEXT CHECK (output_json IS NULL OR regkb_json_valid(output_json)),
  error TEXT CHECK (error IS NULL OR length(error) <= 2000),
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  lease_owner TEXT,
  lease_expires_at_ms BIGINT,
  created_at_ms BIGINT NOT NULL,
  started_at_ms BIGINT,
  completed_at_ms BIGINT,
  -- Exactly the running runs hold a lease.
  CHECK ((status = 'running') = (lease_owner IS NOT NULL AND lease_expires_at_ms IS NOT NULL)),
  CHECK ((status IN ('completed', 'failed')) = (completed_at_ms IS NOT NULL)),
  CHECK (status <> 'completed' OR output_json IS NOT NULL),
  CHECK (status <> 'failed' OR error IS NOT NULL)
);
-- Claim, recovery and queue-depth queries only look at unfinished runs.
CREATE INDEX runs_unfinished ON runs (kind, status, created_at_ms, id) WHERE status IN ('pending', 'running');
CREATE INDEX runs_by_org ON runs (org_id, kind, created_at_ms);
