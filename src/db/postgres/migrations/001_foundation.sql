-- PostgreSQL twin of src/db/migrations/001_foundation.sql: organisations, the jurisdictions
-- they may search, and their API keys. Same ids, columns and CHECKs as SQLite (times and
-- pence are BIGINT), so rows copy across unchanged.
CREATE TABLE organisations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  monthly_allowance_pence BIGINT NOT NULL DEFAULT 0 CHECK (monthly_allowance_pence >= 0),
  created_at_ms BIGINT NOT NULL
);

CREATE TABLE jurisdictions (
  -- SQLite's GLOB pair: a lower-case letter first, then only a-z, 0-9 and '-'.
  slug TEXT PRIMARY KEY CHECK (slug ~ '^[a-z][a-z0-9-]*$' AND length(slug) <= 64),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description TEXT NOT NULL DEFAULT '' CHECK (length(description) <= 1000)
);

CREATE TABLE organisation_jurisdictions (
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  slug TEXT NOT NULL REFERENCES jurisdictions(slug) ON DELETE CASCADE,
  PRIMARY KEY (org_id, slug)
);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- SHA-256 of the whole key; the key itself is never stored.
  key_hash TEXT NOT NULL UNIQUE,
  -- First characters of the secret, enough for a person to tell keys apart.
  display_prefix TEXT NOT NULL,
  created_at_ms BIGINT NOT NULL,
  last_used_at_ms BIGINT,
  revoked_at_ms BIGINT
);
CREATE INDEX api_keys_by_org ON api_keys (org_id, created_at_ms);
