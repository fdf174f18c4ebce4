import type { Clock } from "../clock";
import type { Config } from "../config";
import type { SqlDatabase } from "../db/sql-database";
import { hashesEqual } from "../auth/keys";
import * as store from "./store";

/** A session ends after this long without a request, and after SESSION_LIFETIME_MS whatever happens. */
export const SESSION_IDLE_MS = 12 * 60 * 60_000;
export const SESSION_LIFETIME_MS = 7 * 24 * 60 * 60_000;
/** last_seen is written at most this often, so page views stay reads. */
const TOUCH_RESOLUTION_MS = 60_000;
const COOKIE_VALUE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export type Session = store.SessionWithUser;

/** What dashboard sessions use. */
export interface SessionDeps {
  db: SqlDatabase;
  clock: Clock;
  config: Pick<Config, "publicUrl">;
}

function randomToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

function hashToken(token: string): string {
  return new Bun.CryptoHasher("sha256").update(token).digest("hex");
}

export function isSecure(config: Pick<Config, "publicUrl">): boolean {
  return config.publicUrl.startsWith("https:");
}

/** `__Host-` makes the browser refuse the cookie unless it is Secure, host-only and path=/. */
export function sessionCookieName(config: Pick<Config, "publicUrl">): string {
  return isSecure(config) ? "__Host-regkb_session" : "regkb_session";
}

export function readCookie(request: Request, name: string): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq !== -1 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export function cookieHeader(config: Pick<Config, "publicUrl">, name: string, value: string, maxAgeSeconds: number): string {
  const attributes = [`${name}=${value}`, "Path=/", "HttpOnly", "SameSite=Strict", `Max-Age=${maxAgeSeconds}`];
  if (isSecure(config)) attributes.push("Secure");
  return attributes.join("; ");
}

export function startSession(deps: SessionDeps, userId: string): { token: string; setCookie: string } {
  const nowMs = deps.clock.nowMs();
  const token = randomToken();
  deps.db.transaction(() => {
    store.deleteExpiredSessions(deps.db, nowMs);
    store.insertSession(deps.db, {
      tokenHash: hashToken(token),
      userId,
      csrfToken: randomToken(),
      createdAtMs: nowMs,
      lastSeenAtMs: nowMs,
      expiresAtMs: nowMs + SESSION_LIFETIME_MS,
    });
  }).immediate();
  return { token, setCookie: cookieHeader(deps.config, sessionCookieName(deps.config), token, SESSION_LIFETIME_MS / 1000) };
}

/** The live session named by the request's cookie, or null. Only the cookie counts: never an Authorization header. */
export function currentSession(deps: SessionDeps, request: Request): Session | null {
  const token = readCookie(request, sessionCookieName(deps.config));
  if (!token || !COOKIE_VALUE_PATTERN.test(token)) return null;
  const tokenHash = hashToken(token);
  const session = store.findSession(deps.db, tokenHash);
  if (!session || !hashesEqual(session.tokenHash, tokenHash)) return null;
  const nowMs = deps.clock.nowMs();
  if (nowMs >= session.expiresAtMs || nowMs - session.lastSeenAtMs >= SESSION_IDLE_MS) {
    store.deleteSession(deps.db, tokenHash);
    return null;
  }
  if (nowMs - session.lastSeenAtMs >= TOUCH_RESOLUTION_MS) store.touchSession(deps.db, tokenHash, nowMs);
  return session;
}

export function endSession(deps: SessionDeps, session: Session): string {
  store.deleteSession(deps.db, session.tokenHash);
  return clearSessionCookie(deps.config);
}

export function clearSessionCookie(config: Pick<Config, "publicUrl">): string {
  return cookieHeader(config, sessionCookieName(config), "", 0);
}

/** Constant-time comparison of a token we issued with the one presented. */
export function tokensMatch(issued: string, presented: string | null | undefined): boolean {
  return typeof presented === "string" && presented.length > 0 && hashesEqual(issued, presented);
}

/** Synchronizer token: every state-changing request carries the session's CSRF token. */
export function csrfValid(session: Session, presented: string | null | undefined): boolean {
  return tokensMatch(session.csrfToken, presented);
}
