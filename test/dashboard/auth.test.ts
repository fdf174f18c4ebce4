import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createUser } from "../../src/dashboard/users";
import { LOGIN_FAILURES_PER_EMAIL_MAX, LOGIN_FAILURES_PER_IP_MAX, LOGIN_WINDOW_MS } from "../../src/dashboard/login-limit";
import { SESSION_IDLE_MS } from "../../src/dashboard/sessions";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import { CHOSEN_PASSWORD, DashboardClient, csrfOnPasswordPage, signedInUser } from "./client";

let server: TestServer;
let org: TestOrg;
let nowMs = Date.UTC(2026, 10, 2, 9, 0, 0);
const clock = { nowMs: () => nowMs };

beforeAll(async () => {
  server = await startTestServer({ background: false, clock });
  org = server.createOrg({ name: "Acme" });
});
afterAll(() => server.stop());

describe("sign-in", () => {
  test("pages need a session; sign-in returns to the page asked for", async () => {
    const client = new DashboardClient(server.url);
    const res = await client.request("/ledger?type=settle");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/login?next=%2Fledger%3Ftype%3Dsettle");
    const { client: signedIn } = await signedInUser(server, org.orgId, "next@example.com");
    expect((await signedIn.request("/ledger")).status).toBe(200);
  });

  test("a one-time password must be replaced before anything else, and then stops working", async () => {
    const created = await createUser(server.deps, { orgId: org.orgId, email: "First.Timer@Example.com" });
    const client = new DashboardClient(server.url);
    const signIn = await client.signIn("first.timer@example.com", created.oneTimePassword);
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get("location")).toBe("/password");
    expect((await client.request("/keys")).headers.get("location")).toBe("/password");
    const csrf = await csrfOnPasswordPage(client);
    const short = await client.request("/password", { form: { _csrf: csrf, current: created.oneTimePassword, new: "short", confirm: "short" } });
    expect(short.status).toBe(400);
    const changed = await client.request("/password", { form: { _csrf: csrf, current: created.oneTimePassword, new: CHOSEN_PASSWORD, confirm: CHOSEN_PASSWORD } });
    expect(changed.headers.get("location")).toBe("/?welcome=1");
    expect((await client.request("/keys")).status).toBe(200);
    expect((await new DashboardClient(server.url).signIn("first.timer@example.com", created.oneTimePassword)).status).toBe(401);
    expect((await new DashboardClient(server.url).signIn("first.timer@example.com", CHOSEN_PASSWORD)).status).toBe(303);
  });

  test("the session cookie is HttpOnly and SameSite=Strict, and the database keeps only its hash", async () => {
    const created = await createUser(server.deps, { orgId: org.orgId, email: "cookie@example.com" });
    const client = new DashboardClient(server.url);
    const res = await client.signIn("cookie@example.com", created.oneTimePassword);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("regkb_session="))!;
    expect(cookie).toContain("HttpOnly");
    expect(cookie).toContain("SameSite=Strict");
    expect(cookie).toContain("Path=/");
    expect(cookie).not.toContain("Secure");
    const token = client.cookies.get("regkb_session")!;
    const stored = JSON.stringify(server.deps.db.query("SELECT * FROM dashboard_sessions").all());
    expect(stored).not.toContain(token);
    const users = JSON.stringify(server.deps.db.query("SELECT * FROM users").all());
    expect(users).not.toContain(created.oneTimePassword);
    expect(users).toContain("$argon2id$");
  });

  test("logout ends the session on the server, not only in the browser", async () => {
    const { client } = await signedInUser(server, org.orgId, "leaver@example.com");
    const stolen = client.cookies.get("regkb_session")!;
    const out = await client.request("/logout", { form: { _csrf: await client.csrf() } });
    expect(out.headers.get("location")).toBe("/login?signed-out=1");
    const replay = new DashboardClient(server.url);
    replay.cookies.set("regkb_session", stolen);
    expect((await replay.request("/")).headers.get("location")).toBe("/login");
  });

  test("an idle session expires", async () => {
    const { client } = await signedInUser(server, org.orgId, "idle@example.com");
    expect((await client.request("/")).status).toBe(200);
    nowMs += SESSION_IDLE_MS + 1;
    expect((await client.request("/")).status).toBe(303);
  });

  test("a next= parameter cannot send the user off-site", async () => {
    const { client } = await signedInUser(server, org.orgId, "redirect@example.com");
    for (const next of ["//evil.example/", "https://evil.example/", "/\\evil.example"]) {
      expect((await client.request(`/login?next=${encodeURIComponent(next)}`)).headers.get("location")).toBe("/");
    }
  });
});

describe("API keys and sessions stay apart", () => {
  test("an API key is not a dashboard login, as a bearer header or as a password", async () => {
    await createUser(server.deps, { orgId: org.orgId, email: "keyholder@example.com" });
    const bearer = await fetch(`${server.url}/`, { headers: { authorization: `Bearer ${org.key}` }, redirect: "manual" });
    expect(bearer.status).toBe(303);
    expect(bearer.headers.get("location")).toBe("/login");
    expect((await new DashboardClient(server.url).signIn("keyholder@example.com", org.key)).status).toBe(401);
  });

  test("a dashboard session cookie is not an API credential", async () => {
    const { client } = await signedInUser(server, org.orgId, "cookie-on-api@example.com");
    const res = await client.request("/v1/credits");
    expect(res.status).toBe(401);
    expect((await res.json()).error).toBe("unauthorized");
  });

  test("a password cannot be set to something shaped like an API key", async () => {
    const { client } = await signedInUser(server, org.orgId, "keyshaped@example.com");
    const csrf = await client.csrf();
    const res = await client.request("/password", { form: { _csrf: csrf, current: CHOSEN_PASSWORD, new: org.key, confirm: org.key } });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("an API key cannot be used as a password");
  });
});

describe("CSRF", () => {
  test("a state change without the session's token, or from another origin, is refused", async () => {
    const { client } = await signedInUser(server, org.orgId, "csrf@example.com");
    const keysBefore = server.deps.db.query("SELECT count(*) AS n FROM api_keys").get();
    expect((await client.request("/keys", { form: { name: "no token" } })).status).toBe(403);
    expect((await client.request("/keys", { form: { _csrf: "x".repeat(43), name: "wrong token" } })).status).toBe(403);
    const csrf = await client.csrf();
    expect((await client.request("/keys", { form: { _csrf: csrf, name: "cross-site" }, headers: { origin: "https://evil.example" } })).status).toBe(403);
    expect(server.deps.db.query("SELECT count(*) AS n FROM api_keys").get()).toEqual(keysBefore);
    expect((await client.request("/keys", { form: { _csrf: csrf, name: "fine" } })).status).toBe(303);
  });

  test("the sign-in form itself needs its token", async () => {
    await createUser(server.deps, { orgId: org.orgId, email: "login-csrf@example.com" });
    const res = await new DashboardClient(server.url).request("/login", { form: { email: "login-csrf@example.com", password: "whatever-it-is" } });
    expect(res.status).toBe(403);
  });
});

describe("sign-in rate limits", () => {
  test(`after ${LOGIN_FAILURES_PER_EMAIL_MAX} failures an email is locked for the window, even with the right password`, async () => {
    const { password } = await signedInUser(server, org.orgId, "target@example.com");
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL_MAX; i++) {
      expect((await new DashboardClient(server.url).signIn("target@example.com", `wrong password ${i}`)).status).toBe(401);
    }
    const locked = await new DashboardClient(server.url).signIn("target@example.com", password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await locked.text()).toContain("Too many failed sign-ins");
    nowMs += LOGIN_WINDOW_MS;
    expect((await new DashboardClient(server.url).signIn("target@example.com", password)).status).toBe(303);
  });

  test(`after ${LOGIN_FAILURES_PER_IP_MAX} failures from one address, every email is refused from it`, async () => {
    await signedInUser(server, org.orgId, "bystander@example.com");
    for (let i = 0; i < LOGIN_FAILURES_PER_IP_MAX; i++) {
      await new DashboardClient(server.url).signIn(`guess${i}@example.com`, "not the password");
    }
    expect((await new DashboardClient(server.url).signIn("bystander@example.com", CHOSEN_PASSWORD)).status).toBe(429);
    nowMs += LOGIN_WINDOW_MS;
  }, 30_000);
});

describe("behind https", () => {
  test("the cookie is Secure and __Host- prefixed when REGKB_PUBLIC_URL is https", async () => {
    const secure = await startTestServer({ background: false, env: { REGKB_PUBLIC_URL: "https://regkb.example.com" } });
    try {
      const o = secure.createOrg();
      const created = await createUser(secure.deps, { orgId: o.orgId, email: "tls@example.com" });
      const client = new DashboardClient(secure.url);
      const login = await client.text("/login");
      const token = /name="_login" value="([^"]+)"/.exec(login.text)![1]!;
      const res = await client.request("/login", { form: { _login: token, next: "/", email: "tls@example.com", password: created.oneTimePassword } });
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith("__Host-regkb_session="))!;
      expect(cookie).toContain("Secure");
      expect(cookie).toContain("HttpOnly");
      expect(cookie).toContain("SameSite=Strict");
    } finally {
      await secure.stop();
    }
  });
});
