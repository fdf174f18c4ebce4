-- PostgreSQL twin of src/db/migrations/002_ledger.sql (decisions.md "Money"): append-only
-- entries whose amount_pence is signed by its effect on AVAILABLE credit, per-organisation
-- running totals kept by trigger in the same transaction as each entry, Stripe top-up
-- orders and processed webhook events, and the stored responses behind Idempotency-Key.

CREATE TABLE ledger_entries (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id),
  type TEXT NOT NULL CHECK (type IN ('top_up', 'grant', 'reserve', 'settle', 'release', 'adjustment')),
  amount_pence BIGINT NOT NULL,
  currency TEXT NOT NULL CHECK (currency = 'GBP'),
  description TEXT NOT NULL CHECK (length(description) BETWEEN 1 AND 500),
  -- Every write names itself (reserve:<runId>, topup:<orderId>, grant:<org>:<YYYY-MM>, …):
  -- a replayed step hits this index instead of moving money twice.
  idempotency_key TEXT NOT NULL UNIQUE CHECK (length(idempotency_key) BETWEEN 1 AND 400),
  -- The run, document or order the entry belongs to, when there is one.
  ref TEXT CHECK (ref IS NULL OR length(ref) BETWEEN 1 AND 200),
  created_at_ms BIGINT NOT NULL,
  CONSTRAINT ledger_entries_amount_sign CHECK (
    abs(amount_pence) <= 1000000000 AND (
      (type IN ('top_up', 'grant', 'release') AND amount_pence > 0)
      OR (type = 'reserve' AND amount_pence < 0)
      OR (type = 'settle' AND amount_pence <= 0)
      OR (type = 'adjustment' AND amount_pence <> 0)))
);
CREATE INDEX ledger_entries_by_org ON ledger_entries (org_id, created_at_ms DESC, id DESC);

CREATE FUNCTION ledger_entries_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'ledger entries are append-only: write an adjustment instead';
END
$$;

CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_refuse_change();
CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_refuse_change();
-- TRUNCATE skips row triggers; SQLite has no such statement, PostgreSQL needs its own refusal.
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
  FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_refuse_change();

-- balance = Σ top_up, grant, settle, adjustment; held = −Σ reserve, release (open holds).
-- The CHECKs make the database itself refuse any entry that would leave available credit
-- below zero or a negative hold, whatever code wrote it. The trigger's UPDATE locks the
-- organisation's row until commit, so concurrent movements of one organisation queue there.
CREATE TABLE credit_balances (
  org_id TEXT PRIMARY KEY REFERENCES organisations(id),
  balance_pence BIGINT NOT NULL,
  held_pence BIGINT NOT NULL CHECK (held_pence >= 0),
  CONSTRAINT credit_balances_available_not_negative CHECK (balance_pence - held_pence >= 0)
);

INSERT INTO credit_balances (org_id, balance_pence, held_pence) SELECT id, 0, 0 FROM organisations;

CREATE FUNCTION organisations_open_credit_balance() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO credit_balances (org_id, balance_pence, held_pence) VALUES (NEW.id, 0, 0);
  RETURN NULL;
END
$$;
CREATE TRIGGER organisations_open_credit_balance AFTER INSERT ON organisations
  FOR EACH ROW EXECUTE FUNCTION organisations_open_credit_balance();

CREATE FUNCTION ledger_entries_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE credit_balances SET
    balance_pence = balance_pence + CASE WHEN NEW.type IN ('reserve', 'release') THEN 0 ELSE NEW.amount_pence END,
    held_pence = held_pence - CASE WHEN NEW.type IN ('reserve', 'release') THEN NEW.amount_pence ELSE 0 END
  WHERE org_id = NEW.org_id;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'ledger entry for an organisation without a credit balance';
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER ledger_entries_apply AFTER INSERT ON ledger_entries
  FOR EACH ROW EXECUTE FUNCTION ledger_entries_apply();

-- A hosted checkout asked for by POST /v1/top-ups. Credit lands only from a verified webhook,
-- as one top_up keyed topup:<id>, for the amount stored here (never the event's).
CREATE TABLE top_up_orders (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id),
  amount_pence BIGINT NOT NULL CHECK (amount_pence BETWEEN 1000 AND 100000),
  currency TEXT NOT NULL CHECK (currency = 'GBP'),
  status TEXT NOT NULL CHECK (status IN ('creating', 'pending', 'paid', 'failed', 'expired')),
  checkout_session_id TEXT,
  checkout_url TEXT,
  created_at_ms BIGINT NOT NULL,
  updated_at_ms BIGINT NOT NULL
);
CREATE INDEX top_up_orders_by_org ON top_up_orders (org_id, created_at_ms DESC);
CREATE UNIQUE INDEX top_up_orders_by_session ON top_up_orders (checkout_session_id) WHERE checkout_session_id IS NOT NULL;

-- Webhook event ids already handled: a redelivery is answered without touching money.
CREATE TABLE stripe_events (
  id TEXT PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 255),
  type TEXT NOT NULL,
  order_id TEXT,
  outcome TEXT NOT NULL,
  received_at_ms BIGINT NOT NULL
);
CREATE INDEX stripe_events_by_time ON stripe_events (received_at_ms);

-- Idempotency-Key (decisions.md "Idempotency"): per organisation, kept ≥ 24 hours.
-- operation_id is fixed when the key is first claimed and reused by any re-execution, so
-- the ledger keys a route derives from it dedupe a retry after a crash.
CREATE TABLE idempotency_keys (
  org_id TEXT NOT NULL,
  key TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  request_hash TEXT NOT NULL,
  operation_id TEXT NOT NULL,
  -- Set while a request holds the key; the hold lapses at locked_until_ms (crash recovery).
  owner_token TEXT,
  locked_until_ms BIGINT NOT NULL,
  response_status INTEGER,
  response_content_type TEXT,
  response_body TEXT,
  created_at_ms BIGINT NOT NULL,
  expires_at_ms BIGINT NOT NULL,
  PRIMARY KEY (org_id, key)
);
CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at_ms);
