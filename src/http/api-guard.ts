import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { authenticateRequest } from "./auth";
import { unsupportedMediaType } from "../errors";
import { requestInfo } from "./request-context";
import { isApiPath, type ApiRoute, type RouteTable } from "./route-table";

/** Longest Content-Type echoed back in a 415's details. */
const ECHOED_MEDIA_TYPE_CHARS_MAX = 100;

/**
 * The first word on every /v1 (and /mcp) request, before Elysia parses or validates anything: without
 * a valid key every route (known or not, whatever its body or parameters) is 401; then the
 * rate limit; then a JSON route refuses any other Content-Type with 415. These refusals come
 * before the idempotency layer, so nothing is stored, replayed or charged for them.
 */
export function apiGuard(deps: Deps, routes: RouteTable) {
  return new Elysia({ name: "regkb.api-guard" })
    .onRequest(({ request }) => {
      const pathname = new URL(request.url).pathname;
      if (!isApiPath(pathname)) return;
      const route = routes.find(request.method, pathname);
      const info = requestInfo(request);
      if (info && route) info.route = route.path;
      if (route?.isPublic) return;
      authenticateRequest(deps, request);
      if (route?.takesJson) requireJson(request, route);
    })
    .onTransform({ as: "global" }, ({ request, route, query }) => {
      // Query strings are text: an integer parameter is converted only when it is plain decimal
      // digits, so "1e2", "0x10" or "5.0" reach validation as strings and are refused.
      for (const field of routes.byPattern(request.method, route)?.integerQueryFields ?? []) {
        const value = (query as Record<string, unknown>)[field];
        if (typeof value === "string" && /^-?\d{1,15}$/.test(value)) (query as Record<string, unknown>)[field] = Number(value);
      }
    });
}

function requireJson(request: Request, route: ApiRoute): void {
  const contentType = request.headers.get("content-type");
  const mediaType = (contentType ?? "").split(";", 1)[0]!.trim().toLowerCase();
  if (mediaType !== "application/json") {
    const got = contentType === null ? "no Content-Type" : `got ${mediaType.slice(0, ECHOED_MEDIA_TYPE_CHARS_MAX) || "an empty Content-Type"}`;
    throw unsupportedMediaType(`${route.method} ${route.path} takes Content-Type: application/json (${got})`);
  }
  // Elysia picks its parser by the exact lower-case type: hand it the canonical spelling.
  if (contentType!.split(";", 1)[0] !== "application/json") request.headers.set("content-type", "application/json");
}
