-- PostgreSQL twin of src/db/migrations/011_ledger_purpose.sql: what each ledger entry is
-- for (src/billing/ledger-keys.ts), stored beside its key so that reads ask for a purpose
-- instead of matching key prefixes. Written with every new entry (the insert trigger below
-- refuses one without it) and never changed afterwards. Entries written before this
-- migration are classified from their keys exactly as SQLite's 011 does.

ALTER TABLE ledger_entries ADD COLUMN purpose TEXT CHECK (purpose IS NULL OR CASE purpose
  WHEN 'search' THEN type = 'settle'
  WHEN 'search_refund' THEN type = 'adjustment'
  WHEN 'document' THEN type = 'settle'
  WHEN 'document_refund' THEN type = 'adjustment'
  WHEN 'run_hold' THEN type = 'reserve'
  WHEN 'run_settle' THEN type = 'settle'
  WHEN 'run_release' THEN type = 'release'
  WHEN 'card_top_up' THEN type = 'top_up'
  WHEN 'operator_top_up' THEN type = 'top_up'
  WHEN 'monthly_grant' THEN type = 'grant'
  WHEN 'operator_adjustment' THEN type = 'adjustment'
  WHEN 'legacy' THEN true
  ELSE false END);

-- The append-only trigger forbids the one-off backfill below; it is back before the end of
-- this migration's transaction.
ALTER TABLE ledger_entries DISABLE TRIGGER ledger_entries_no_update;

-- substr(), not LIKE: LIKE treats '_' as a wildcard.
UPDATE ledger_entries SET purpose = CASE
  WHEN type = 'adjustment' AND substr(idempotency_key, 1, 14) = 'refund:search:' THEN 'search_refund'
  WHEN type = 'adjustment' AND substr(idempotency_key, 1, 7) = 'refund:' THEN 'document_refund'
  WHEN type = 'settle' AND substr(idempotency_key, 1, 7) = 'search:' THEN 'search'
  WHEN type = 'settle' AND substr(idempotency_key, 1, 4) = 'doc:' THEN 'document'
  WHEN type = 'reserve' AND substr(idempotency_key, 1, 8) = 'reserve:' THEN 'run_hold'
  WHEN type = 'settle' AND substr(idempotency_key, 1, 7) = 'settle:' THEN 'run_settle'
  WHEN type = 'release' AND substr(idempotency_key, 1, 8) = 'release:' THEN 'run_release'
  WHEN type = 'top_up' AND substr(idempotency_key, 1, 15) = 'topup:operator:' THEN 'operator_top_up'
  WHEN type = 'top_up' AND substr(idempotency_key, 1, 6) = 'topup:' THEN 'card_top_up'
  WHEN type = 'grant' AND substr(idempotency_key, 1, 6) = 'grant:' THEN 'monthly_grant'
  WHEN type = 'adjustment' AND substr(idempotency_key, 1, 11) = 'adjustment:' THEN 'operator_adjustment'
  ELSE 'legacy' END;

ALTER TABLE ledger_entries ENABLE TRIGGER ledger_entries_no_update;

CREATE FUNCTION ledger_entries_require_purpose() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'a ledger entry needs a purpose (src/billing/ledger-keys.ts)';
END
$$;
CREATE TRIGGER ledger_entries_purpose_required BEFORE INSERT ON ledger_entries
  FOR EACH ROW WHEN (NEW.purpose IS NULL) EXECUTE FUNCTION ledger_entries_require_purpose();
