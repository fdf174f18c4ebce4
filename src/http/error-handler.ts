import { Elysia, ValidationError } from "elysia";
import type { Deps } from "../deps";
import { isStorageFull } from "../db/storage";
import { internalError, notFound, Refusal, storageFull, validationFailed } from "../errors";
import { requestInfo } from "./request-context";
import { describeRule } from "./schema";

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** "body.topK: must be an integer from 1 to 50" — the field first, then the rule it breaks. */
function describeValidation(error: ValidationError): string {
  const first = error.all[0] as { path?: string; summary?: string; message?: string; schema?: Record<string, unknown>; value?: unknown } | undefined;
  const why = describeRule(first?.schema, first?.value) ?? first?.summary ?? first?.message ?? "invalid value";
  const path = first?.path ? first.path.replace(/^\//, "").replace(/\//g, ".") : "";
  return `${path ? `${error.type}.${path}` : error.type}: ${why}`;
}

/**
 * Every error leaves as the Error body with a stable code. Validation (Elysia's 422)
 * becomes 400 validation_failed naming the field and its rule, or 404 for a path id; a
 * full disk (SQLITE_FULL, ENOSPC) is 503 storage_full, logged at most once a minute;
 * anything else unexpected is a 500 with no stack trace or SQL in the body — those go to
 * the log with the request id.
 */
export function errorHandler(deps: Deps) {
  return new Elysia({ name: "regkb.errors" }).onError({ as: "global" }, ({ code, error, request }) => {
    if (error instanceof ValidationError) {
      if (error.type === "response") return respond(refusalOf(deps, request, error));
      // A path parameter is an id: one that fails its schema (a malformed uuid) names nothing.
      if (error.type === "params") return respond(notFound("no such resource (the id is not a UUID)"));
      return respond(validationFailed(describeValidation(error)));
    }
    if (code === "PARSE") return respond(validationFailed("body: malformed JSON"));
    if (code === "NOT_FOUND") return respond(notFound("no such route"));
    return respond(refusalOf(deps, request, error));
  });
}

/** A refusal as the Error body, with the status the error table gives its code. */
function respond(refusal: Refusal): Response {
  return json(refusal.status, refusal.body(), refusal.headers);
}

/**
 * What a failure thrown by a service is answered with, wherever it is answered (an HTTP
 * error here, an MCP tool error in src/mcp/): a refusal as it is; a full disk (SQLITE_FULL,
 * ENOSPC) as storage_full, logged at most once a minute; anything else as internal_error
 * naming the request id, with the error itself only in the log.
 */
export function refusalOf(deps: Deps, request: Request, error: unknown): Refusal {
  if (error instanceof Refusal) return error;
  const info = requestInfo(request);
  if (isStorageFull(error)) {
    // The failed write rolled back (money moves in one transaction), so nothing was charged.
    deps.storage.noteFull({ requestId: info?.id ?? null, route: info?.route ?? null });
    return storageFull();
  }
  deps.log.error("internal_error", {
    requestId: info?.id ?? null,
    route: info?.route ?? null,
    errorName: error instanceof Error ? error.name : typeof error,
    message: error instanceof Error ? error.message.slice(0, 500) : String(error).slice(0, 500),
  });
  return internalError(info?.id ?? "unknown");
}
