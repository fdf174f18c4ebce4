import type { Database } from "bun:sqlite";

export interface UserRow {
  id: string;
  orgId: string;
  email: string;
  passwordHash: string;
  passwordTemporary: boolean;
  createdAtMs: number;
  lastSignInAtMs: number | null;
}

export interface SessionRow {
  tokenHash: string;
  userId: string;
  csrfToken: string;
  createdAtMs: number;
  lastSeenAtMs: number;
  expiresAtMs: number;
}

/** A session joined with the user it signs in, which is what every page needs. */
export interface SessionWithUser extends SessionRow {
  orgId: string;
  email: string;
  passwordTemporary: boolean;
}

const USER_COLUMNS = `id, org_id AS orgId, email, password_hash AS passwordHash, password_temporary AS passwordTemporary,
  created_at_ms AS createdAtMs, last_sign_in_at_ms AS lastSignInAtMs`;

type RawUser = Omit<UserRow, "passwordTemporary"> & { passwordTemporary: number };
const toUser = (row: RawUser | null): UserRow | null => (row ? { ...row, passwordTemporary: row.passwordTemporary === 1 } : null);

export function insertUser(db: Database, user: UserRow): void {
  db.query(
    `INSERT INTO users (id, org_id, email, password_hash, password_temporary, created_at_ms, last_sign_in_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, NULL)`,
  ).run(user.id, user.orgId, user.email, user.passwordHash, user.passwordTemporary ? 1 : 0, user.createdAtMs);
}

export function findUserByEmail(db: Database, email: string): UserRow | null {
  return toUser(db.query<RawUser, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?`).get(email));
}

export function findUser(db: Database, id: string): UserRow | null {
  return toUser(db.query<RawUser, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).get(id));
}

export function listUsers(db: Database, orgId: string, limit: number): UserRow[] {
  return db
    .query<RawUser, [string, number]>(`SELECT ${USER_COLUMNS} FROM users WHERE org_id = ? ORDER BY created_at_ms, id LIMIT ?`)
    .all(orgId, limit)
    .map((r) => toUser(r)!);
}

export function setPassword(db: Database, userId: string, passwordHash: string, temporary: boolean): void {
  db.query("UPDATE users SET password_hash = ?, password_temporary = ? WHERE id = ?").run(passwordHash, temporary ? 1 : 0, userId);
}

export function recordSignIn(db: Database, userId: string, nowMs: number): void {
  db.query("UPDATE users SET last_sign_in_at_ms = ? WHERE id = ?").run(nowMs, userId);
}

export function insertSession(db: Database, session: SessionRow): void {
  db.query(
    `INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, created_at_ms, last_seen_at_ms, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(session.tokenHash, session.userId, session.csrfToken, session.createdAtMs, session.lastSeenAtMs, session.expiresAtMs);
}

const SESSION_SELECT = `SELECT s.token_hash AS tokenHash, s.user_id AS userId, s.csrf_token AS csrfToken,
    s.created_at_ms AS createdAtMs, s.last_seen_at_ms AS lastSeenAtMs, s.expires_at_ms AS expiresAtMs,
    u.org_id AS orgId, u.email, u.password_temporary AS passwordTemporary
  FROM dashboard_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`;

export function findSession(db: Database, tokenHash: string): SessionWithUser | null {
  const row = db.query<Omit<SessionWithUser, "passwordTemporary"> & { passwordTemporary: number }, [string]>(SESSION_SELECT).get(tokenHash);
  return row ? { ...row, passwordTemporary: row.passwordTemporary === 1 } : null;
}

export function touchSession(db: Database, tokenHash: string, nowMs: number): void {
  db.query("UPDATE dashboard_sessions SET last_seen_at_ms = ? WHERE token_hash = ?").run(nowMs, tokenHash);
}

export function deleteSession(db: Database, tokenHash: string): void {
  db.query("DELETE FROM dashboard_sessions WHERE token_hash = ?").run(tokenHash);
}

/** Signs a user out everywhere except, optionally, the session making the change. */
export function deleteUserSessions(db: Database, userId: string, exceptTokenHash = ""): void {
  db.query("DELETE FROM dashboard_sessions WHERE user_id = ? AND token_hash != ?").run(userId, exceptTokenHash);
}

export function deleteExpiredSessions(db: Database, nowMs: number): void {
  db.query("DELETE FROM dashboard_sessions WHERE expires_at_ms <= ?").run(nowMs);
}

/** A sign-in attempt: in progress, then a failure; a success deletes it. Returns the row id. */
export function insertLoginAttempt(db: Database, subject: string, atMs: number): number {
  return Number(db.query("INSERT INTO login_attempts (subject, at_ms) VALUES (?, ?)").run(subject, atMs).lastInsertRowid);
}

/** Attempts (in progress or failed) since `sinceMs`, and the oldest of them (it decides when the window reopens). */
export function countLoginAttempts(db: Database, subject: string, sinceMs: number): { count: number; oldestAtMs: number | null } {
  return db
    .query<{ count: number; oldestAtMs: number | null }, [string, number]>(
      "SELECT count(*) AS count, min(at_ms) AS oldestAtMs FROM login_attempts WHERE subject = ? AND at_ms > ?",
    )
    .get(subject, sinceMs)!;
}

export function deleteLoginAttempt(db: Database, id: number): void {
  db.query("DELETE FROM login_attempts WHERE id = ?").run(id);
}

export function clearLoginAttempts(db: Database, subject: string): void {
  db.query("DELETE FROM login_attempts WHERE subject = ?").run(subject);
}

export function deleteLoginAttemptsBefore(db: Database, beforeMs: number): void {
  db.query("DELETE FROM login_attempts WHERE at_ms <= ?").run(beforeMs);
}
