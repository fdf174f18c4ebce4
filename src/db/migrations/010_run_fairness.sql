-- Fair claiming across organisations (src/jobs/store.ts claimNextRun): per kind of run, the
-- organisation with the fewest runs in progress goes first, then the one served least
-- recently, then the oldest pending run. `turn` orders the last claim of each organisation
-- and kind (a counter, not a clock, so two claims never tie).
CREATE TABLE run_turns (
  kind TEXT NOT NULL,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  turn INTEGER NOT NULL CHECK (turn >= 1),
  PRIMARY KEY (kind, org_id)
) WITHOUT ROWID;

-- Runs of a kind and status grouped by organisation, oldest first within each. Not partial:
-- the claim asks for status = 'pending' (or 'running'), which SQLite does not take as
-- implying a partial index's status IN (...).
CREATE INDEX runs_by_kind_status_org ON runs (kind, status, org_id, created_at_ms, id);
