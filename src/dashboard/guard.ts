import { findOrganisation } from "../auth/store";
import type { Deps } from "../deps";
import { Refusal } from "../errors";
import { html } from "./html";
import { notice, page, type PageContext } from "./layout";
import { htmlResponse, redirect } from "./respond";
import { csrfValid, currentSession, type Session } from "./sessions";

/** Ordinary dashboard forms are tiny; uploads have their own, configured limit. */
export const FORM_BYTES_MAX = 64 * 1024;

export interface DashboardRequest {
  deps: Deps;
  request: Request;
  url: URL;
  session: Session;
  pageContext: PageContext;
}

export interface DashboardPost extends DashboardRequest {
  form: FormData;
}

type GetHandler = (req: DashboardRequest) => Response | Promise<Response>;
type PostHandler = (req: DashboardPost) => Response | Promise<Response>;

function signInRedirect(url: URL): Response {
  const next = url.pathname + url.search;
  return redirect(next === "/" ? "/login" : `/login?next=${encodeURIComponent(next)}`);
}

function context(deps: Deps, request: Request, session: Session): DashboardRequest {
  const orgName = findOrganisation(deps.db, session.orgId)?.name ?? "Organisation";
  return { deps, request, url: new URL(request.url), session, pageContext: { session, orgName } };
}

/**
 * A cross-site request never carries our SameSite=Strict cookie, but a same-site one
 * (another port, a sibling subdomain) can: refuse any POST whose Origin is not ours.
 */
export function sameOrigin(deps: Deps, request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) {
    const site = request.headers.get("sec-fetch-site");
    return site === null || site === "same-origin" || site === "none";
  }
  return origin === new URL(request.url).origin || origin === new URL(deps.config.publicUrl).origin;
}

export function forbidden(reason: string): Response {
  return htmlResponse(
    html`<!doctype html><html lang="en-GB"><head><meta charset="utf-8"><title>Request refused · regkb</title></head>
<body><main><h1>Request refused</h1><p>${reason}</p><p><a href="/">Back to the dashboard</a></p></main></body></html>`.value,
    { status: 403 },
  );
}

/** A signed-in page. Without a session: to sign-in. With a one-time password still in use: to choose a new one. */
export function authedGet(deps: Deps, handler: GetHandler, options: { allowTemporaryPassword?: boolean } = {}) {
  return async ({ request }: { request: Request }): Promise<Response> => {
    const session = currentSession(deps, request);
    const url = new URL(request.url);
    if (!session) return signInRedirect(url);
    if (session.passwordTemporary && !options.allowTemporaryPassword) return redirect("/password");
    return handler(context(deps, request, session));
  };
}

/** A signed-in state change: same origin, a bounded body, and the session's CSRF token in `_csrf` or `x-csrf-token`. */
export function authedPost(deps: Deps, handler: PostHandler, options: { bodyBytesMax?: number; allowTemporaryPassword?: boolean } = {}) {
  return async ({ request }: { request: Request }): Promise<Response> => {
    if (!sameOrigin(deps, request)) return forbidden("This form was sent from another site.");
    const session = currentSession(deps, request);
    if (!session) return redirect("/login");
    if (session.passwordTemporary && !options.allowTemporaryPassword) return redirect("/password");
    const bodyBytesMax = options.bodyBytesMax ?? FORM_BYTES_MAX;
    const length = Number(request.headers.get("content-length") ?? "NaN");
    if (!Number.isFinite(length) || length > bodyBytesMax) {
      return htmlResponse(page(context(deps, request, session).pageContext, "overview", "Too large",
        notice("bad", "That was too large to accept", `The limit is ${Math.floor(bodyBytesMax / 1024 / 1024) || 1} MiB.`)), { status: 413 });
    }
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return forbidden("The form could not be read.");
    }
    const presented = request.headers.get("x-csrf-token") ?? form.get("_csrf");
    if (!csrfValid(session, typeof presented === "string" ? presented : null)) {
      return forbidden("This form has expired or did not come from this dashboard. Go back, reload the page and try again.");
    }
    return handler({ ...context(deps, request, session), form });
  };
}

/** A form field as a bounded string ("" when missing or a file). */
export function field(form: FormData, name: string, lengthMax = 1000): string {
  const value = form.get(name);
  return typeof value === "string" ? value.slice(0, lengthMax) : "";
}

/** What a person should read when a service call refuses: the error table's title over the API's own human `details`. */
export function describeError(error: unknown): { title: string; details: string; status: number } {
  if (error instanceof Refusal) return { title: error.title, details: error.details, status: error.status };
  throw error;
}
