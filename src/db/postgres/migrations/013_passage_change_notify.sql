-- Wakes the nodes' search replicas (src/search/replica/follower.ts) when passage changes
-- commit, so a deleted passage leaves every node's results well inside their poll interval.
-- NOTIFY is delivered at commit (never for a rolled-back change), and PostgreSQL folds the
-- identical notifications of one transaction into one, so a copy of 100k passages wakes a
-- node once. A notification carries nothing: the node reads the log from its own position.
CREATE FUNCTION passage_changes_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('regkb_passages', '');
  RETURN NULL;
END
$$;
CREATE TRIGGER passage_changes_notify AFTER INSERT ON passage_changes
  FOR EACH STATEMENT EXECUTE FUNCTION passage_changes_notify();
