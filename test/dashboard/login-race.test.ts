import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { LOGIN_FAILURES_PER_EMAIL_MAX, LOGIN_FAILURES_PER_IP_MAX, LOGIN_WINDOW_MS } from "../../src/dashboard/login-limit";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import { DashboardClient, signedInUser } from "./client";

let server: TestServer;
let org: TestOrg;
let nowMs = Date.UTC(2026, 10, 3, 9, 0, 0);
const clock = { nowMs: () => nowMs };
const PARALLEL = 100;

beforeAll(async () => {
  server = await startTestServer({ background: false, clock });
  org = server.createOrg({ name: "Race" });
});
afterAll(() => server.stop());

type Attempt = { email: string; password: string };

/** Each attempt is a separate browser with its own sign-in form token; returns a function that posts it over real HTTP. */
async function prepare(attempts: Attempt[]): Promise<(() => Promise<number>)[]> {
  return Promise.all(
    attempts.map(async ({ email, password }) => {
      const client = new DashboardClient(server.url);
      const page = await client.text("/login");
      const token = /name="_login" value="([^"]+)"/.exec(page.text)![1]!;
      return async () => (await client.request("/login", { form: { _login: token, next: "/", email, password } })).status;
    }),
  );
}

async function signInAtOnce(attempts: Attempt[]): Promise<number[]> {
  return Promise.all((await prepare(attempts)).map((post) => post()));
}

function attemptRows(subject: string): number {
  return server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM login_attempts WHERE subject = ?").get(subject)!.n;
}

const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe("sign-in limits hold under parallel attempts", () => {
  test(`${PARALLEL} parallel attempts on one email: at most ${LOGIN_FAILURES_PER_EMAIL_MAX} are checked, the rest 429, the right password among them and after them is refused`, async () => {
    const { password } = await signedInUser(server, org.orgId, "parallel@example.com");
    const posts = await prepare(Array.from({ length: PARALLEL }, (_, i) => ({ email: "parallel@example.com", password: i === 29 ? password : `wrong guess ${i}` })));
    // The first 29 go at once; the right password and the other 70 follow while those are still being checked.
    const firstWave = posts.slice(0, 29).map((post) => post());
    let firstWaveDone = false;
    void Promise.all(firstWave).then(() => (firstWaveDone = true));
    while (attemptRows("email:parallel@example.com") < LOGIN_FAILURES_PER_EMAIL_MAX && !firstWaveDone) await Bun.sleep(1);
    const secondWave = posts.slice(29).map((post) => post());
    const statuses = await Promise.all([...firstWave, ...secondWave]);
    expect(statuses[29]).toBe(429);
    // 401 and 303 are the attempts whose password was verified.
    expect(count(statuses, 401) + count(statuses, 303)).toBeLessThanOrEqual(LOGIN_FAILURES_PER_EMAIL_MAX);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(PARALLEL - LOGIN_FAILURES_PER_EMAIL_MAX);
    expect(count(statuses, 401) + count(statuses, 303) + count(statuses, 429)).toBe(PARALLEL);
    expect((await new DashboardClient(server.url).signIn("parallel@example.com", password)).status).toBe(429);
    nowMs += LOGIN_WINDOW_MS;
    expect((await new DashboardClient(server.url).signIn("parallel@example.com", password)).status).toBe(303);
  }, 60_000);

  test(`${PARALLEL} parallel attempts from one address on many emails: at most ${LOGIN_FAILURES_PER_IP_MAX} are checked`, async () => {
    const { password } = await signedInUser(server, org.orgId, "bystander-race@example.com");
    const attempts = Array.from({ length: PARALLEL }, (_, i) => ({ email: `guess-${i}@example.com`, password: "not the password" }));
    const statuses = await signInAtOnce(attempts);
    expect(count(statuses, 401)).toBeLessThanOrEqual(LOGIN_FAILURES_PER_IP_MAX);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(PARALLEL - LOGIN_FAILURES_PER_IP_MAX);
    expect((await new DashboardClient(server.url).signIn("bystander-race@example.com", password)).status).toBe(429);
    nowMs += LOGIN_WINDOW_MS;
    expect((await new DashboardClient(server.url).signIn("bystander-race@example.com", password)).status).toBe(303);
  }, 60_000);

  test("a successful sign-in does not count against its address; sequential failures still lock as before", async () => {
    const { password } = await signedInUser(server, org.orgId, "steady@example.com");
    for (let i = 0; i < LOGIN_FAILURES_PER_IP_MAX + 5; i++) {
      expect((await new DashboardClient(server.url).signIn("steady@example.com", password)).status).toBe(303);
    }
    const attempts = server.deps.db.query<{ n: number }, [number]>("SELECT count(*) AS n FROM login_attempts WHERE subject LIKE 'ip:%' AND at_ms > ?").get(nowMs - LOGIN_WINDOW_MS);
    expect(attempts).toEqual({ n: 0 });
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL_MAX; i++) {
      expect((await new DashboardClient(server.url).signIn("steady@example.com", `wrong ${i}`)).status).toBe(401);
    }
    expect((await new DashboardClient(server.url).signIn("steady@example.com", password)).status).toBe(429);
    nowMs += LOGIN_WINDOW_MS;
  }, 60_000);
});
