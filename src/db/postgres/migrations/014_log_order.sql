-- Two orders the system of record must keep itself, whatever code writes.
--
-- 1. ledger_entries.seq: the order an organisation's entries were written in. `regkb backup`
-- replays entries through SQLite's balance trigger in this order, so each meets the CHECKs it
-- met here. A BEFORE trigger first locks the organisation's balance row, then numbers the
-- entry: entries of one organisation are numbered in commit order even when their writers
-- took no lock of their own (the balance trigger's UPDATE would only lock after numbering).
-- Existing rows are numbered in the order the backup used until now (writing transaction,
-- then heap position), with the append-only trigger paused for that one UPDATE.
CREATE SEQUENCE ledger_entries_seq AS BIGINT;
ALTER TABLE ledger_entries ADD COLUMN seq BIGINT;
ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_no_update;
UPDATE ledger_entries SET seq = numbered.n
  FROM (SELECT id, row_number() OVER (ORDER BY age(xmin) DESC, ctid) AS n FROM ledger_entries) AS numbered
  WHERE ledger_entries.id = numbered.id;
ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_no_update;
SELECT setval('ledger_entries_seq', coalesce((SELECT max(seq) FROM ledger_entries), 0) + 1, false);
ALTER TABLE ledger_entries ALTER COLUMN seq SET NOT NULL;
CREATE UNIQUE INDEX ledger_entries_by_seq ON ledger_entries (seq);

CREATE FUNCTION ledger_entries_number() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM credit_balances WHERE org_id = NEW.org_id FOR UPDATE;
  NEW.seq := nextval('ledger_entries_seq');
  RETURN NEW;
END
$$;
CREATE TRIGGER ledger_entries_number BEFORE INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_number();

-- 2. passage_changes keeps one change per passage: its latest. A change only names a
-- passage (a node loads it as it then stands, or removes it), so an older change of the same
-- passage tells a node nothing the newer one does not, wherever the node stands: the log
-- holds at most one row per passage ever written (a deleted passage keeps its 'delete').
-- Writers already take turns on the table (003), so this DELETE races with no writer.
CREATE INDEX passage_changes_by_passage ON passage_changes (chunk_id);
CREATE OR REPLACE FUNCTION passage_changes_append(change TEXT, passage_id BIGINT, document TEXT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE passage_changes IN SHARE ROW EXCLUSIVE MODE;
  DELETE FROM passage_changes WHERE chunk_id = passage_id;
  INSERT INTO passage_changes (op, chunk_id, document_id, changed_at_ms)
  VALUES (change, passage_id, document, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT);
END
$$;
