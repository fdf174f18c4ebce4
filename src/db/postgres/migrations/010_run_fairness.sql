-- PostgreSQL twin of src/db/migrations/010_run_fairness.sql: fair claiming across
-- organisations. Per kind of run, the organisation with the fewest runs in progress goes
-- first, then the one served least recently, then the oldest pending run. `turn` orders the
-- last claim of each organisation and kind (a counter, not a clock, so two claims never tie).
CREATE TABLE run_turns (
  kind TEXT NOT NULL,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  turn BIGINT NOT NULL CHECK (turn >= 1),
  PRIMARY KEY (kind, org_id)
);

-- Runs of a kind and status grouped by organisation, oldest first within each.
CREATE INDEX runs_by_kind_status_org ON runs (kind, status, org_id, created_at_ms, id);
