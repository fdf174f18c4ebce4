import { Elysia } from "elysia";
import { authenticateApiKey, type Authenticated } from "../auth/service";
import { grantOnRequest } from "../billing/grants";
import type { Deps } from "../deps";
import { unauthorized } from "../errors";
import { requestInfo } from "./request-context";

const authenticated = new WeakMap<Request, Authenticated>();

/**
 * Bearer API-key authentication, run by apiGuard before the request is parsed or validated.
 * The per-key rate limit is taken here because it needs the key's identity; the month's
 * allowance lands on its first authenticated request (a Map lookup after that).
 */
export function authenticateRequest(deps: Deps, request: Request): Authenticated {
  const auth = authenticateApiKey(deps, request.headers.get("authorization") ?? undefined);
  authenticated.set(request, auth);
  const info = requestInfo(request);
  if (info) info.orgId = auth.orgId;
  deps.rateLimiter.take(auth.keyId, deps.clock.nowMs());
  grantOnRequest(deps, auth.orgId);
  return auth;
}

/**
 * Gives a capability plugin's handlers `auth`. Scoped: use it in each /v1 plugin. The key was
 * checked by apiGuard; a request that reached here without one is refused all the same.
 */
export function requireApiKey() {
  return new Elysia().resolve({ as: "scoped" }, ({ request }): { auth: Authenticated } => {
    const auth = authenticated.get(request);
    if (!auth) throw unauthorized("send Authorization: Bearer rk_live_…");
    return { auth };
  });
}
