import { isPostgres, type SqlDatabase } from "../db/sql-database";

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

// Aliases are quoted: PostgreSQL folds unquoted names to lower case.
const USER_COLUMNS = `id, org_id AS "orgId", email, password_hash AS "passwordHash", password_temporary AS "passwordTemporary",
  created_at_ms AS "createdAtMs", last_sign_in_at_ms AS "lastSignInAtMs"`;

type RawUser = Omit<UserRow, "passwordTemporary"> & { passwordTemporary: number };
const toUser = (row: RawUser | null): UserRow | null => (row ? { ...row, passwordTemporary: row.passwordTemporary === 1 } : null);

/** Ties in a visible order are broken by id in byte order on both engines, whatever PostgreSQL's collation. */
function byteOrder(db: SqlDatabase, column: string): string {
  return isPostgres(db) ? `${column} COLLATE "C"` : column;
}

export function insertUser(db: SqlDatabase, user: UserRow): void {
  db.query(
    `INSERT INTO users (id, org_id, email, password_hash, password_temporary, created_at_ms, last_sign_in_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, NULL)`,
  ).run(user.id, user.orgId, user.email, user.passwordHash, user.passwordTemporary ? 1 : 0, user.createdAtMs);
}

export function findUserByEmail(db: SqlDatabase, email: string): UserRow | null {
  return toUser(db.query<RawUser, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE email = ?`).get(email));
}

export function findUser(db: SqlDatabase, id: string): UserRow | null {
  return toUser(db.query<RawUser, [string]>(`SELECT ${USER_COLUMNS} FROM users WHERE id = ?`).get(id));
}

export function listUsers(db: SqlDatabase, orgId: string, limit: number): UserRow[] {
  return db
    .query<RawUser, [string, number]>(`SELECT ${USER_COLUMNS} FROM users WHERE org_id = ? ORDER BY created_at_ms, ${byteOrder(db, "id")} LIMIT ?`)
    .all(orgId, limit)
    .map((r) => toUser(r)!);
}

export function setPassword(db: SqlDatabase, userId: string, passwordHash: string, temporary: boolean): void {
  db.query("UPDATE users SET password_hash = ?, password_temporary = ? WHERE id = ?").run(passwordHash, temporary ? 1 : 0, userId);
}

export function recordSignIn(db: SqlDatabase, userId: string, nowMs: number): void {
  db.query("UPDATE users SET last_sign_in_at_ms = ? WHERE id = ?").run(nowMs, userId);
}

export function insertSession(db: SqlDatabase, session: SessionRow): void {
  db.query(
    `INSERT INTO dashboard_sessions (token_hash, user_id, csrf_token, created_at_ms, last_seen_at_ms, expires_at_ms)
     VALUES (?, ?, ?, ?, ?, ?)`,
  ).run(session.tokenHash, session.userId, session.csrfToken, session.createdAtMs, session.lastSeenAtMs, session.expiresAtMs);
}

const SESSION_SELECT = `SELECT s.token_hash AS "tokenHash", s.user_id AS "userId", s.csrf_token AS "csrfToken",
    s.created_at_ms AS "createdAtMs", s.last_seen_at_ms AS "lastSeenAtMs", s.expires_at_ms AS "expiresAtMs",
    u.org_id AS "orgId", u.email, u.password_temporary AS "passwordTemporary"
  FROM dashboard_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`;

export function findSession(db: SqlDatabase, tokenHash: string): SessionWithUser | null {
  const row = db.query<Omit<SessionWithUser, "passwordTemporary"> & { passwordTemporary: number }, [string]>(SESSION_SELECT).get(tokenHash);
  return row ? { ...row, passwordTemporary: row.passwordTemporary === 1 } : null;
}

export function touchSession(db: SqlDatabase, tokenHash: string, nowMs: number): void {
  db.query("UPDATE dashboard_sessions SET last_seen_at_ms = ? WHERE token_hash = ?").run(nowMs, tokenHash);
}

export function deleteSession(db: SqlDatabase, tokenHash: string): void {
  db.query("DELETE FROM dashboard_sessions WHERE token_hash = ?").run(tokenHash);
}

/** Signs a user out everywhere except, optionally, the session making the change. */
export function deleteUserSessions(db: SqlDatabase, userId: string, exceptTokenHash = ""): void {
  db.query("DELETE FROM dashboard_sessions WHERE user_id = ? AND token_hash != ?").run(userId, exceptTokenHash);
}

export function deleteExpiredSessions(db: SqlDatabase, nowMs: number): void {
  db.query("DELETE FROM dashboard_sessions WHERE expires_at_ms <= ?").run(nowMs);
}

/** A sign-in attempt: in progress, then a failure; a success deletes it. Returns the row id. */
export function insertLoginAttempt(db: SqlDatabase, subject: string, atMs: number): number {
  return db.query<{ id: number }, [string, number]>("INSERT INTO login_attempts (subject, at_ms) VALUES (?, ?) RETURNING id").get(subject, atMs)!.id;
}

/** Attempts (in progress or failed) since `sinceMs`, and the oldest of them (it decides when the window reopens). */
export function countLoginAttempts(db: SqlDatabase, subject: string, sinceMs: number): { count: number; oldestAtMs: number | null } {
  return db
    .query<{ count: number; oldestAtMs: number | null }, [string, number]>(
      `SELECT count(*) AS count, min(at_ms) AS "oldestAtMs" FROM login_attempts WHERE subject = ? AND at_ms > ?`,
    )
    .get(subject, sinceMs)!;
}

export function deleteLoginAttempt(db: SqlDatabase, id: number): void {
  db.query("DELETE FROM login_attempts WHERE id = ?").run(id);
}

export function clearLoginAttempts(db: SqlDatabase, subject: string): void {
  db.query("DELETE FROM login_attempts WHERE subject = ?").run(subject);
}

/**
 * PostgreSQL only (SQLite's BEGIN IMMEDIATE already excludes every other writer): sign-in
 * reservations take turns across nodes until the transaction ends, so a count and the insert
 * it allows cannot interleave with another node's. Row locks cannot do it: an attempt not yet
 * written has no row to lock. Self-conflicting mode, so reservations queue, while reads go on.
 */
export function lockLoginAttempts(db: SqlDatabase): void {
  if (isPostgres(db)) db.exec("LOCK TABLE login_attempts IN SHARE ROW EXCLUSIVE MODE");
}

export function deleteLoginAttemptsBefore(db: SqlDatabase, beforeMs: number): void {
  db.query("DELETE FROM login_attempts WHERE at_ms <= ?").run(beforeMs);
}
