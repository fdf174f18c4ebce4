-- Dashboard sign-in: an organisation's people, their sessions, and failed sign-in attempts.
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organisations(id) ON DELETE CASCADE,
  -- Stored lower-cased and trimmed, so one address is one account.
  email TEXT NOT NULL UNIQUE CHECK (length(email) BETWEEN 3 AND 254),
  -- Argon2id PHC string from Bun.password.
  password_hash TEXT NOT NULL,
  -- 1 while the operator-issued one-time password is in use: sign-in then demands a new one.
  password_temporary INTEGER NOT NULL DEFAULT 1 CHECK (password_temporary IN (0, 1)),
  created_at_ms INTEGER NOT NULL,
  last_sign_in_at_ms INTEGER
);
CREATE INDEX users_by_org ON users (org_id);

CREATE TABLE dashboard_sessions (
  -- SHA-256 of the cookie value; the cookie itself is never stored.
  token_hash TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL,
  last_seen_at_ms INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX dashboard_sessions_by_user ON dashboard_sessions (user_id);
CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at_ms);

-- Failed sign-ins only; `subject` is `email:<address>` or `ip:<address>`.
CREATE TABLE login_attempts (
  id INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  at_ms INTEGER NOT NULL
);
CREATE INDEX login_attempts_by_subject ON login_attempts (subject, at_ms);
CREATE INDEX login_attempts_by_time ON login_attempts (at_ms);
