import { createUser } from "../../src/dashboard/users";
import type { TestServer } from "../helpers/server";

/** A cookie-keeping HTTP client that behaves like a browser posting the dashboard's forms (no redirects followed). */
export class DashboardClient {
  readonly cookies = new Map<string, string>();
  constructor(readonly baseUrl: string) {}

  async request(path: string, init: { method?: string; form?: Record<string, string> | FormData; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let body: BodyInit | undefined;
    if (init.form instanceof FormData) body = init.form;
    else if (init.form) body = new URLSearchParams(init.form);
    if (body && !("origin" in headers)) headers.origin = this.baseUrl;
    const response = await fetch(this.baseUrl + path, { method: init.method ?? (body ? "POST" : "GET"), headers, body, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /max-age=0/i.test(cookie)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  async text(path: string): Promise<{ status: number; text: string; response: Response }> {
    const response = await this.request(path);
    return { status: response.status, text: await response.text(), response };
  }

  /** Signs in through the real form; returns the response to the POST. */
  async signIn(email: string, password: string): Promise<Response> {
    const page = await this.text("/login");
    const token = /name="_login" value="([^"]+)"/.exec(page.text)?.[1] ?? "";
    return this.request("/login", { form: { _login: token, next: "/", email, password } });
  }

  /** The CSRF token of the current session, read from a page's sign-out form. */
  async csrf(): Promise<string> {
    const page = await this.text("/jurisdictions");
    const token = /name="_csrf" value="([^"]+)"/.exec(page.text)?.[1];
    if (!token) throw new Error(`no CSRF token on the page (status ${page.status})`);
    return token;
  }
}

export const CHOSEN_PASSWORD = "a long and memorable sentence";

/** A user who has already replaced the one-time password, signed in. */
export async function signedInUser(server: TestServer, orgId: string, email: string): Promise<{ client: DashboardClient; password: string }> {
  const created = await createUser(server.deps, { orgId, email });
  const client = new DashboardClient(server.url);
  await client.signIn(email, created.oneTimePassword);
  const csrf = await csrfOnPasswordPage(client);
  const changed = await client.request("/password", {
    form: { _csrf: csrf, current: created.oneTimePassword, new: CHOSEN_PASSWORD, confirm: CHOSEN_PASSWORD },
  });
  if (changed.status !== 303) throw new Error(`password change failed: ${changed.status}`);
  return { client, password: CHOSEN_PASSWORD };
}

export async function csrfOnPasswordPage(client: DashboardClient): Promise<string> {
  const page = await client.text("/password");
  return /name="_csrf" value="([^"]+)"/.exec(page.text)![1]!;
}
