import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { assetResponse } from "./assets";
import { documentsDelete, documentsDeleteConfirm, documentsPage, documentsStatus, documentsUpload } from "./pages/documents";
import { jurisdictionsPage } from "./pages/jurisdictions";
import { keysCreate, keysPage, keysRevoke, keysRevokeConfirm } from "./pages/keys";
import { ledgerPage } from "./pages/ledger";
import { loginPage, loginSubmit, logoutSubmit } from "./pages/login";
import { overviewPage } from "./pages/overview";
import { passwordPage, passwordSubmit } from "./pages/password";
import { searchPage, searchSubmit } from "./pages/search";
import { OneTimeReveal } from "./reveal";
import { topUpOrderStatus, topUpPage, topUpSubmit } from "./pages/top-up";

const hidden = { detail: { hide: true } };
/** Forms are read by the page handlers themselves (bounded, with getAll for repeated fields). */
const form = { ...hidden, parse: "none" as const };

/**
 * The organisation dashboard, served at `/`. Sign-in is by email and password into a
 * cookie session; API keys are never accepted here and the session cookie is never
 * accepted under /v1 (those routes read only the Authorization header).
 */
export function dashboardRoutes(deps: Deps) {
  const reveal = new OneTimeReveal();
  return new Elysia()
    .get("/assets/:file", ({ request, set }) => {
      const found = assetResponse(new URL(request.url).pathname);
      if (found) return found;
      set.status = 404;
      return "not found";
    }, hidden)
    .get("/login", loginPage(deps), hidden)
    .post("/login", loginSubmit(deps), form)
    .post("/logout", logoutSubmit(deps), form)
    .get("/password", passwordPage(deps), hidden)
    .post("/password", passwordSubmit(deps), form)
    .get("/", overviewPage(deps), hidden)
    .get("/ledger", ledgerPage(deps), hidden)
    .get("/keys", keysPage(deps, reveal), hidden)
    .post("/keys", keysCreate(deps, reveal), form)
    .get("/keys/:id/revoke", keysRevokeConfirm(deps), hidden)
    .post("/keys/:id/revoke", keysRevoke(deps), form)
    .get("/documents", documentsPage(deps), hidden)
    .get("/documents/status", documentsStatus(deps), hidden)
    .post("/documents", documentsUpload(deps), form)
    .get("/documents/:id/delete", documentsDeleteConfirm(deps), hidden)
    .post("/documents/:id/delete", documentsDelete(deps), form)
    .get("/top-up", topUpPage(deps), hidden)
    .post("/top-up", topUpSubmit(deps), form)
    .get("/top-up/orders/:id", topUpOrderStatus(deps), hidden)
    .get("/search", searchPage(deps), hidden)
    .post("/search", searchSubmit(deps), form)
    .get("/jurisdictions", jurisdictionsPage(deps), hidden);
}
