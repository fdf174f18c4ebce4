import type { Deps } from "../../deps";
import { Refusal } from "../../errors";
import { requestInfo } from "../../http/request-context";
import { forbidden, sameOrigin, FORM_BYTES_MAX, field } from "../guard";
import { html } from "../html";
import { notice, soloPage } from "../layout";
import { htmlResponse, NEXT_PATH_LENGTH_MAX, redirect, safeNextPath } from "../respond";
import { cookieHeader, csrfValid, currentSession, endSession, isSecure, readCookie, startSession, tokensMatch } from "../sessions";
import { EMAIL_LENGTH_MAX, PASSWORD_LENGTH_MAX, signIn } from "../users";

/** Before there is a session, the sign-in form is protected by a double-submit token in its own cookie. */
const LOGIN_TOKEN_TTL_SECONDS = 60 * 60;

function loginCookieName(deps: Deps): string {
  return isSecure(deps.config) ? "__Host-regkb_login" : "regkb_login";
}

interface LoginView {
  token: string;
  next: string;
  email?: string;
  problem?: { title: string; details: string };
  status?: number;
  signedOut?: boolean;
}

function renderLogin(deps: Deps, input: LoginView): Response {
  const body = html`
    <h1>Sign in</h1>
    <p class="lede">Use the email address and password your administrator gave you. API keys are for programs and cannot be used here.</p>
    ${input.signedOut ? notice("good", "You are signed out.") : ""}
    ${input.problem ? notice("bad", input.problem.title, input.problem.details) : ""}
    <form class="stack" method="post" action="/login">
      <input type="hidden" name="_login" value="${input.token}">
      <input type="hidden" name="next" value="${input.next}">
      <div class="field">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="${EMAIL_LENGTH_MAX}" value="${input.email ?? ""}"${input.email ? "" : html` autofocus`}>
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required maxlength="${PASSWORD_LENGTH_MAX}"${input.email ? html` autofocus` : ""}>
      </div>
      <button class="button" type="submit">Sign in</button>
    </form>`;
  const cookies = [cookieHeader(deps.config, loginCookieName(deps), input.token, LOGIN_TOKEN_TTL_SECONDS)];
  return htmlResponse(soloPage("Sign in", body), { status: input.status ?? 200, cookies });
}

function newLoginToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
}

export function loginPage(deps: Deps) {
  return ({ request }: { request: Request }): Response => {
    const url = new URL(request.url);
    const next = safeNextPath(url.searchParams.get("next"));
    if (currentSession(deps, request)) return redirect(next);
    return renderLogin(deps, { token: newLoginToken(), next, signedOut: url.searchParams.get("signed-out") === "1" });
  };
}

export function loginSubmit(deps: Deps) {
  return async ({ request }: { request: Request }): Promise<Response> => {
    if (!sameOrigin(deps, request)) return forbidden("This form was sent from another site.");
    const length = Number(request.headers.get("content-length") ?? "NaN");
    if (!Number.isFinite(length) || length > FORM_BYTES_MAX) return forbidden("The form was too large.");
    let form: FormData;
    try {
      form = await request.formData();
    } catch {
      return forbidden("The form could not be read.");
    }
    const next = safeNextPath(field(form, "next", NEXT_PATH_LENGTH_MAX + 1));
    const email = field(form, "email", EMAIL_LENGTH_MAX + 1);
    const cookieToken = readCookie(request, loginCookieName(deps));
    const formToken = field(form, "_login", 100);
    if (!cookieToken || !tokensMatch(cookieToken, formToken)) {
      return renderLogin(deps, {
        token: newLoginToken(), next, email, status: 403,
        problem: { title: "Please try again", details: "The sign-in form expired. It has been refreshed; enter your password again." },
      });
    }
    try {
      const user = await signIn(deps, {
        email,
        password: field(form, "password", PASSWORD_LENGTH_MAX + 1),
        clientIp: requestInfo(request)?.clientIp ?? "unknown",
      });
      // A fresh session id on every sign-in: a token planted before sign-in is worthless after it.
      const existing = currentSession(deps, request);
      if (existing) endSession(deps, existing);
      const { setCookie } = startSession(deps, user.id);
      const clearLogin = cookieHeader(deps.config, loginCookieName(deps), "", 0);
      return redirect(user.passwordTemporary ? "/password" : next, [setCookie, clearLogin]);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const title = error.status === 429 ? "Too many attempts" : "Sign-in failed";
      const response = renderLogin(deps, { token: newLoginToken(), next, email, status: error.status, problem: { title, details: error.details } });
      for (const [name, value] of Object.entries(error.headers)) response.headers.set(name, value);
      return response;
    }
  };
}

export function logoutSubmit(deps: Deps) {
  return async ({ request }: { request: Request }): Promise<Response> => {
    if (!sameOrigin(deps, request)) return forbidden("This form was sent from another site.");
    const session = currentSession(deps, request);
    if (!session) return redirect("/login");
    const form = await request.formData().catch(() => new FormData());
    if (!csrfValid(session, field(form, "_csrf", 100))) return forbidden("This form has expired. Go back, reload the page and try again.");
    return redirect("/login?signed-out=1", [endSession(deps, session)]);
  };
}
