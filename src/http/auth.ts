import { Elysia } from "elysia";
import { authenticateApiKey, type Authenticated } from "../auth/service";
import { grantOnRequest } from "../billing/grants";
import type { Deps } from "../deps";
import { requestInfo } from "./request-context";

/**
 * Bearer API-key authentication for /v1 routes. Scoped: a capability plugin that uses
 * it gets `auth` in its handlers. The per-key rate limit is checked here because it
 * needs the key's identity.
 */
export function requireApiKey(deps: Deps) {
  return new Elysia().resolve({ as: "scoped" }, ({ headers, request }): { auth: Authenticated } => {
    const auth = authenticateApiKey(deps, headers.authorization);
    const info = requestInfo(request);
    if (info) info.orgId = auth.orgId;
    deps.rateLimiter.take(auth.keyId, deps.clock.nowMs());
    // The month's allowance lands on its first authenticated request (a Map lookup after that).
    grantOnRequest(deps, auth.orgId);
    return { auth };
  });
}
