import type { Deps } from "../deps";
import { ApiError } from "../http/errors";
import * as store from "./store";

/** Failed sign-ins allowed per window before that email, or that address, must wait. */
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const LOGIN_FAILURES_PER_EMAIL_MAX = 5;
/** Higher than per email: several people may share an office's address. */
export const LOGIN_FAILURES_PER_IP_MAX = 20;

function tooMany(deps: Deps, subject: string, max: number): number | null {
  const nowMs = deps.clock.nowMs();
  const { count, oldestAtMs } = store.countLoginFailures(deps.db, subject, nowMs - LOGIN_WINDOW_MS);
  if (count < max || oldestAtMs === null) return null;
  return Math.max(1, Math.ceil((oldestAtMs + LOGIN_WINDOW_MS - nowMs) / 1000));
}

/** Throws 429 rate_limited (with Retry-After) when the email or the client address has failed too often. */
export function checkLoginAllowed(deps: Deps, email: string, clientIp: string): void {
  const waitSeconds = tooMany(deps, `email:${email}`, LOGIN_FAILURES_PER_EMAIL_MAX) ?? tooMany(deps, `ip:${clientIp}`, LOGIN_FAILURES_PER_IP_MAX);
  if (waitSeconds !== null) {
    const minutes = Math.ceil(waitSeconds / 60);
    throw new ApiError(429, "rate_limited", `too many failed sign-ins; try again in ${minutes} minute${minutes === 1 ? "" : "s"}`, {
      "retry-after": String(waitSeconds),
    });
  }
}

export function recordLoginFailure(deps: Deps, email: string, clientIp: string): void {
  const nowMs = deps.clock.nowMs();
  deps.db.transaction(() => {
    // Old rows are useless once outside the window; pruning here keeps the table bounded.
    store.deleteLoginFailuresBefore(deps.db, nowMs - LOGIN_WINDOW_MS);
    store.insertLoginFailure(deps.db, `email:${email}`, nowMs);
    store.insertLoginFailure(deps.db, `ip:${clientIp}`, nowMs);
  }).immediate();
}

/** The rightful owner signing in clears their email's count; the address's count stays. */
export function recordLoginSuccess(deps: Deps, email: string): void {
  store.clearLoginFailures(deps.db, `email:${email}`);
}
