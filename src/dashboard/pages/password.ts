import type { Deps } from "../../deps";
import { authedGet, authedPost, describeError, field, type DashboardRequest } from "../guard";
import { html } from "../html";
import { csrfField, notice, page } from "../layout";
import { htmlResponse, redirect } from "../respond";
import { PASSWORD_LENGTH_MAX, PASSWORD_LENGTH_MIN, changePassword } from "../users";

function render(req: DashboardRequest, problem?: { title: string; details: string }, status = 200): Response {
  const temporary = req.session.passwordTemporary;
  const body = html`
    <h1>${temporary ? "Choose your password" : "Change your password"}</h1>
    <p class="lede">${temporary
      ? "You signed in with a one-time password. Choose your own password to continue; the one-time password stops working."
      : "Other places where you are signed in will be signed out."}</p>
    ${problem ? notice("bad", problem.title, problem.details) : ""}
    ${req.url.searchParams.get("changed") === "1" ? notice("good", "Password changed.") : ""}
    <form class="stack card" method="post" action="/password">
      ${csrfField(req.session)}
      <input type="text" name="username" autocomplete="username" value="${req.session.email}" hidden>
      <div class="field">
        <label for="current">${temporary ? "One-time password" : "Current password"}</label>
        <input id="current" name="current" type="password" autocomplete="current-password" required maxlength="${PASSWORD_LENGTH_MAX}">
      </div>
      <div class="field">
        <label for="new">New password</label>
        <input id="new" name="new" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTH_MIN}" maxlength="${PASSWORD_LENGTH_MAX}" aria-describedby="new-help">
        <p class="help" id="new-help">At least ${PASSWORD_LENGTH_MIN} characters. A short sentence is easy to remember and hard to guess.</p>
      </div>
      <div class="field">
        <label for="confirm">New password again</label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required minlength="${PASSWORD_LENGTH_MIN}" maxlength="${PASSWORD_LENGTH_MAX}">
      </div>
      <div class="actions"><button class="button" type="submit">Save password</button></div>
    </form>`;
  return htmlResponse(page(req.pageContext, "password", temporary ? "Choose your password" : "Change password", body), { status });
}

export function passwordPage(deps: Deps) {
  return authedGet(deps, (req) => render(req), { allowTemporaryPassword: true });
}

export function passwordSubmit(deps: Deps) {
  return authedPost(
    deps,
    async (req) => {
      const newPassword = field(req.form, "new", PASSWORD_LENGTH_MAX + 1);
      if (newPassword !== field(req.form, "confirm", PASSWORD_LENGTH_MAX + 1)) {
        return render(req, { title: "Please check the form", details: "The two new passwords are different." }, 400);
      }
      try {
        await changePassword(deps, {
          userId: req.session.userId,
          currentPassword: field(req.form, "current", PASSWORD_LENGTH_MAX + 1),
          newPassword,
          keepSessionTokenHash: req.session.tokenHash,
        });
      } catch (error) {
        const problem = describeError(error);
        return render(req, problem, problem.status);
      }
      return redirect(req.session.passwordTemporary ? "/?welcome=1" : "/password?changed=1");
    },
    { allowTemporaryPassword: true },
  );
}
