// Dashboard users, sessions and the sign-in limit (src/dashboard/users.ts, sessions.ts,
// login-limit.ts, store.ts) on SQLite and on PostgreSQL through the synchronous handle
// (test/helpers/engines.ts): the same calls, the same answers.
import { beforeAll, expect, test } from "bun:test";
import { LOGIN_FAILURES_PER_EMAIL_MAX, LOGIN_FAILURES_PER_IP_MAX, LOGIN_WINDOW_MS } from "../../src/dashboard/login-limit";
import { currentSession, endSession, SESSION_IDLE_MS, SESSION_LIFETIME_MS, startSession, type SessionDeps } from "../../src/dashboard/sessions";
import * as store from "../../src/dashboard/store";
import { changePassword, createUser, resetUserPassword, signIn } from "../../src/dashboard/users";
import { Refusal } from "../../src/errors";
import { forEachEngine, type TestEngine } from "../helpers/engines";
import { refusalOf } from "../helpers/refusal";

const MINUTE_MS = 60_000;

/** A request carrying the session cookie, as a browser sends it. */
const withCookie = (token: string) => new Request("http://localhost/", { headers: { cookie: `other=1; regkb_session=${token}` } });
const tokenOf = (setCookie: string) => /^regkb_session=([^;]+);/.exec(setCookie)![1]!;

forEachEngine((current) => {
  let engine: TestEngine;
  let nowMs = 1_700_000_000_000;
  let deps: SessionDeps;
  let orgId: string;
  beforeAll(() => {
    engine = current();
    deps = { db: engine.db, clock: { nowMs: () => nowMs }, config: { publicUrl: "http://localhost" } };
    orgId = engine.createOrganisation("Dashboard users");
  });

  test("a user is created with a one-time password, found by email and id, listed oldest first", async () => {
    const created = await createUser(deps, { orgId, email: "  First@Example.COM " });
    expect(created.email).toBe("first@example.com");
    const found = store.findUserByEmail(engine.db, "first@example.com");
    expect(found).toEqual({
      id: created.id,
      orgId,
      email: "first@example.com",
      passwordHash: found!.passwordHash,
      passwordTemporary: true,
      createdAtMs: nowMs,
      lastSignInAtMs: null,
    });
    expect(await Bun.password.verify(created.oneTimePassword, found!.passwordHash)).toBe(true);
    expect(store.findUser(engine.db, created.id)).toEqual(found);
    expect(store.findUser(engine.db, "no-such-user")).toBeNull();
    nowMs += 1;
    const second = await createUser(deps, { orgId, email: "second@example.com" });
    expect(store.listUsers(engine.db, orgId, 100).map((u) => u.email)).toEqual(["first@example.com", "second@example.com"]);
    expect(store.listUsers(engine.db, orgId, 1).map((u) => u.id)).toEqual([created.id]);
    expect(second.oneTimePassword).not.toBe(created.oneTimePassword);
  });

  test("a second user with the same email is refused, also when both are created at once", async () => {
    await createUser(deps, { orgId, email: "once@example.com" });
    expect(await refusalOf(() => createUser(deps, { orgId, email: "ONCE@example.com" }))).toEqual({ status: 409, code: "user_exists" });
    // Both look the email up before either has hashed its password and written its row.
    const outcomes = await Promise.allSettled([0, 1].map(() => createUser(deps, { orgId, email: "twice@example.com" })));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    const rejected = outcomes.find((o) => o.status === "rejected") as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(Refusal);
    expect((rejected.reason as Refusal).code).toBe("user_exists");
    expect(store.listUsers(engine.db, orgId, 100).filter((u) => u.email === "twice@example.com")).toHaveLength(1);
  });

  test("sign-in with the one-time password, a changed password, then a reset that ends every session", async () => {
    const { id, oneTimePassword } = await createUser(deps, { orgId, email: "changer@example.com" });
    const user = await signIn(deps, { email: "Changer@example.com", password: oneTimePassword, clientIp: "10.0.0.1" });
    expect(user.id).toBe(id);
    expect(store.findUser(engine.db, id)?.lastSignInAtMs).toBe(nowMs);
    const kept = startSession(deps, id);
    const other = startSession(deps, id);
    const keptSession = currentSession(deps, withCookie(tokenOf(kept.setCookie)))!;
    await changePassword(deps, { userId: id, currentPassword: oneTimePassword, newPassword: "a much longer password", keepSessionTokenHash: keptSession.tokenHash });
    expect(store.findUser(engine.db, id)?.passwordTemporary).toBe(false);
    expect(currentSession(deps, withCookie(tokenOf(other.setCookie)))).toBeNull();
    expect(currentSession(deps, withCookie(tokenOf(kept.setCookie)))?.userId).toBe(id);
    expect(await refusalOf(() => signIn(deps, { email: "changer@example.com", password: oneTimePassword, clientIp: "10.0.0.1" }))).toEqual({
      status: 401,
      code: "invalid_credentials",
    });
    const reset = await resetUserPassword(deps, "changer@example.com");
    expect(store.findUser(engine.db, id)?.passwordTemporary).toBe(true);
    expect(currentSession(deps, withCookie(tokenOf(kept.setCookie)))).toBeNull();
    expect((await signIn(deps, { email: "changer@example.com", password: reset.oneTimePassword, clientIp: "10.0.0.1" })).id).toBe(id);
  });

  test("a session is found with its user, touched at most once a minute, and ends when idle, too old or signed out", async () => {
    const { id } = await createUser(deps, { orgId, email: "sessions@example.com" });
    const started = startSession(deps, id);
    const token = tokenOf(started.setCookie);
    const session = currentSession(deps, withCookie(token))!;
    expect(session).toEqual({
      tokenHash: session.tokenHash,
      userId: id,
      csrfToken: session.csrfToken,
      createdAtMs: nowMs,
      lastSeenAtMs: nowMs,
      expiresAtMs: nowMs + SESSION_LIFETIME_MS,
      orgId,
      email: "sessions@example.com",
      passwordTemporary: true,
    });
    expect(currentSession(deps, new Request("http://localhost/", { headers: { authorization: `Bearer ${token}` } }))).toBeNull();
    nowMs += 30_000;
    expect(currentSession(deps, withCookie(token))?.lastSeenAtMs).toBe(nowMs - 30_000);
    nowMs += 30_000;
    expect(currentSession(deps, withCookie(token))?.lastSeenAtMs).toBe(nowMs - MINUTE_MS);
    expect(store.findSession(engine.db, session.tokenHash)?.lastSeenAtMs).toBe(nowMs);
    nowMs += SESSION_IDLE_MS;
    expect(currentSession(deps, withCookie(token))).toBeNull();
    expect(store.findSession(engine.db, session.tokenHash)).toBeNull();

    const busy = tokenOf(startSession(deps, id).setCookie);
    const busyHash = currentSession(deps, withCookie(busy))!.tokenHash;
    const busyEndsMs = nowMs + SESSION_LIFETIME_MS;
    while (nowMs + SESSION_IDLE_MS / 2 < busyEndsMs) {
      nowMs += SESSION_IDLE_MS / 2;
      expect(currentSession(deps, withCookie(busy))).not.toBeNull();
    }
    nowMs = busyEndsMs;
    expect(currentSession(deps, withCookie(busy))).toBeNull();
    expect(store.findSession(engine.db, busyHash)).toBeNull();

    const leaving = tokenOf(startSession(deps, id).setCookie);
    expect(endSession(deps, currentSession(deps, withCookie(leaving))!)).toContain("Max-Age=0");
    expect(currentSession(deps, withCookie(leaving))).toBeNull();
  });

  test("starting a session removes the ones past their lifetime", async () => {
    const { id } = await createUser(deps, { orgId, email: "expired@example.com" });
    store.insertSession(engine.db, { tokenHash: "old-session", userId: id, csrfToken: "c", createdAtMs: 1, lastSeenAtMs: 1, expiresAtMs: nowMs });
    startSession(deps, id);
    expect(store.findSession(engine.db, "old-session")).toBeNull();
  });

  test(`${LOGIN_FAILURES_PER_EMAIL_MAX} failed sign-ins per email, then 429 until the window reopens; a success clears the email's count`, async () => {
    const { oneTimePassword } = await createUser(deps, { orgId, email: "guessed@example.com" });
    const attempt = (password: string, clientIp = "10.0.1.1") => refusalOf(() => signIn(deps, { email: "guessed@example.com", password, clientIp }));
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL_MAX - 1; i++) expect(await attempt(`wrong ${i}`)).toEqual({ status: 401, code: "invalid_credentials" });
    await signIn(deps, { email: "guessed@example.com", password: oneTimePassword, clientIp: "10.0.1.1" });
    expect(store.countLoginAttempts(engine.db, "email:guessed@example.com", 0).count).toBe(0);
    expect(store.countLoginAttempts(engine.db, "ip:10.0.1.1", 0)).toEqual({ count: LOGIN_FAILURES_PER_EMAIL_MAX - 1, oldestAtMs: nowMs });
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL_MAX; i++) expect((await attempt(`again ${i}`, `10.0.2.${i}`)).code).toBe("invalid_credentials");
    expect(await attempt(oneTimePassword, "10.0.3.1")).toEqual({ status: 429, code: "rate_limited" });
    nowMs += LOGIN_WINDOW_MS;
    expect((await signIn(deps, { email: "guessed@example.com", password: oneTimePassword, clientIp: "10.0.3.1" })).email).toBe("guessed@example.com");
  });

  test(`${LOGIN_FAILURES_PER_IP_MAX} failed sign-ins per address across emails, then 429; old attempts are pruned`, async () => {
    for (let i = 0; i < LOGIN_FAILURES_PER_IP_MAX; i++) {
      expect((await refusalOf(() => signIn(deps, { email: `nobody${i}@example.com`, password: "x", clientIp: "10.9.9.9" }))).code).toBe("invalid_credentials");
    }
    expect(await refusalOf(() => signIn(deps, { email: "someone@example.com", password: "x", clientIp: "10.9.9.9" }))).toEqual({ status: 429, code: "rate_limited" });
    expect(store.countLoginAttempts(engine.db, "ip:10.9.9.9", 0).count).toBe(LOGIN_FAILURES_PER_IP_MAX);
    nowMs += LOGIN_WINDOW_MS;
    expect((await refusalOf(() => signIn(deps, { email: "someone@example.com", password: "x", clientIp: "10.9.9.9" }))).code).toBe("invalid_credentials");
    expect(store.countLoginAttempts(engine.db, "ip:10.9.9.9", 0)).toEqual({ count: 1, oldestAtMs: nowMs });
  });

  test("attempt rows get distinct ids, and one deleted by id leaves the others", () => {
    const first = store.insertLoginAttempt(engine.db, "ip:ids", nowMs);
    const second = store.insertLoginAttempt(engine.db, "ip:ids", nowMs);
    expect(Number.isSafeInteger(first) && second > first).toBe(true);
    store.deleteLoginAttempt(engine.db, first);
    expect(store.countLoginAttempts(engine.db, "ip:ids", 0).count).toBe(1);
    store.clearLoginAttempts(engine.db, "ip:ids");
    expect(store.countLoginAttempts(engine.db, "ip:ids", 0)).toEqual({ count: 0, oldestAtMs: null });
  });
});
