import type { Clock } from "../clock";
import type { SqlDatabase } from "../db/sql-database";
import { rateLimited } from "../errors";
import * as store from "./store";

/** What the sign-in limit uses. */
export interface LoginLimitDeps {
  db: SqlDatabase;
  clock: Clock;
}

/** Failed sign-ins allowed per window before that email, or that address, must wait. */
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_FAILURES_PER_EMAIL_MAX = 5;
/** Higher than per email: several people may share an office's address. */
export const LOGIN_FAILURES_PER_IP_MAX = 20;

/** An attempt in progress: its address row, which a success takes back (a success clears the email's rows anyway). */
export interface LoginAttempt {
  ipRowId: number;
}

function tooMany(deps: LoginLimitDeps, subject: string, max: number, nowMs: number): number | null {
  const { count, oldestAtMs } = store.countLoginAttempts(deps.db, subject, nowMs - LOGIN_WINDOW_MS);
  if (count < max || oldestAtMs === null) return null;
  return Math.max(1, Math.ceil((oldestAtMs + LOGIN_WINDOW_MS - nowMs) / 1000));
}

/**
 * Counts and records the attempt in one write transaction, before the password is
 * verified: parallel attempts queue on the write lock, so at most the limit of them per
 * email and per address are ever verified, and the rest get 429 without touching the
 * password. The attempt counts as a failure unless recordLoginSuccess says otherwise. On
 * PostgreSQL the transaction first takes the attempts' lock, so nodes take turns here too.
 */
export function reserveLoginAttempt(deps: LoginLimitDeps, email: string, clientIp: string): LoginAttempt {
  const nowMs = deps.clock.nowMs();
  return deps.db.transaction(() => {
    store.lockLoginAttempts(deps.db);
    // Old rows are useless once outside the window; pruning here keeps the table bounded.
    store.deleteLoginAttemptsBefore(deps.db, nowMs - LOGIN_WINDOW_MS);
    const waitSeconds =
      tooMany(deps, `email:${email}`, LOGIN_FAILURES_PER_EMAIL_MAX, nowMs) ?? tooMany(deps, `ip:${clientIp}`, LOGIN_FAILURES_PER_IP_MAX, nowMs);
    if (waitSeconds !== null) {
      const minutes = Math.ceil(waitSeconds / 60);
      throw rateLimited(`too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? "" : "s"}`, waitSeconds);
    }
    store.insertLoginAttempt(deps.db, `email:${email}`, nowMs);
    return { ipRowId: store.insertLoginAttempt(deps.db, `ip:${clientIp}`, nowMs) };
  }).immediate();
}

/** The rightful owner signed in: their email's count clears; the address keeps its failures but not this attempt. */
export function recordLoginSuccess(deps: LoginLimitDeps, email: string, attempt: LoginAttempt): void {
  deps.db.transaction(() => {
    store.clearLoginAttempts(deps.db, `email:${email}`);
    store.deleteLoginAttempt(deps.db, attempt.ipRowId);
  }).immediate();
}
