import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import { CHOSEN_PASSWORD, DashboardClient, signedInUser } from "./client";

let server: TestServer;
let org: TestOrg;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  org = server.createOrg({ name: "Redirects" });
});
afterAll(() => server.stop());

/**
 * `next` as it appears in the query string (already percent-encoded) and, for the form,
 * decoded once, as a browser would post it. Every one of these must land on "/".
 */
const HOSTILE_NEXT = [
  "/%09/evil.com", // tab: URL parsers strip it, leaving //evil.com
  "/%0a/evil.com",
  "/%0d%0aX:1", // header injection
  "/%E3%80%82", // non-ASCII: not a valid header value
  "/%E2%80%AE/moc.live",
  "/%00",
  "//evil.com",
  "/%2F/evil.com", // decodes to //evil.com
  "%2F%2Fevil.com",
  "/%5Cevil.com", // decodes to /\evil.com
  "/%5C%5Cevil.com",
  "%5C%5Cevil.com",
  "https://evil.com",
  "https:/evil.com",
  "javascript:alert(1)",
  "evil.com",
  "/%20/evil.com",
  "/%09",
  `/${"a".repeat(600)}`,
  "",
];

const PLAIN_NEXT = ["/", "/ledger?type=settle", "/documents", "/keys?page=2&x=a%2Fb"];

function sessionRows(): number {
  return server.deps.db.query<{ n: number }, []>("SELECT count(*) AS n FROM dashboard_sessions").get()!.n;
}

describe("next= after sign-in", () => {
  test("GET /login with a hostile next sends a signed-in user to /, never elsewhere, never a 500", async () => {
    const { client } = await signedInUser(server, org.orgId, "get-next@example.com");
    for (const next of HOSTILE_NEXT) {
      const res = await client.request(`/login?next=${next}`);
      expect({ next, status: res.status, location: res.headers.get("location") }).toEqual({ next, status: 303, location: "/" });
    }
    for (const next of PLAIN_NEXT) {
      const res = await client.request(`/login?next=${encodeURIComponent(next)}`);
      expect({ next, location: res.headers.get("location") }).toEqual({ next, location: next });
    }
  });

  test("the sign-in form echoes only a safe next, and the page renders for every value", async () => {
    for (const next of HOSTILE_NEXT) {
      const page = await new DashboardClient(server.url).text(`/login?next=${next}`);
      expect({ next, status: page.status }).toEqual({ next, status: 200 });
      expect(page.text).toContain('name="next" value="/"');
    }
  });

  test("POST /login with a hostile next: 303 to / with the session cookie; no session row without its cookie", async () => {
    // A user past the one-time password, so sign-in goes to next rather than to /password.
    await signedInUser(server, org.orgId, "post-next@example.com");
    let cookiesIssued = 0;
    const rowsBefore = sessionRows();
    for (const raw of HOSTILE_NEXT) {
      const next = safeDecode(raw);
      const client = new DashboardClient(server.url);
      const page = await client.text("/login");
      const token = /name="_login" value="([^"]+)"/.exec(page.text)![1]!;
      const res = await client.request("/login", {
        form: { _login: token, next, email: "post-next@example.com", password: CHOSEN_PASSWORD },
      });
      expect({ raw, status: res.status, location: res.headers.get("location") }).toEqual({ raw, status: 303, location: "/" });
      if (res.headers.getSetCookie().some((c) => c.startsWith("regkb_session=") && !/max-age=0/i.test(c))) cookiesIssued++;
    }
    expect(cookiesIssued).toBe(HOSTILE_NEXT.length);
    expect(sessionRows() - rowsBefore).toBe(cookiesIssued);
  });
});

function safeDecode(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
