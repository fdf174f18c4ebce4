import type { Deps } from "../deps";
import { beginRequest } from "./request-context";

type Handler = (request: Request) => Response | Promise<Response>;
type PeerLookup = { requestIP(request: Request): { address: string } | null };

/**
 * Wraps the app's fetch: request id in and out, one JSON access-log line and the
 * request metrics per request. It sits outside Elysia so even errors raised before
 * routing are logged and counted.
 */
export function observe(deps: Deps, handle: Handler): (request: Request, server?: PeerLookup) => Promise<Response> {
  const requests = deps.metrics.counter("regkb_http_requests_total", "HTTP requests by route and status.");
  const latency = deps.metrics.histogram("regkb_http_request_duration_seconds", "HTTP request latency by route.");
  return async (request, server) => {
    const info = beginRequest(request, server?.requestIP(request)?.address);
    let response = await handle(request);
    const ms = (Bun.nanoseconds() - info.startNs) / 1e6;
    const route = info.route ?? "unmatched";
    const status = response.status;
    try {
      response.headers.set("x-request-id", info.id);
    } catch {
      response = new Response(response.body, response);
      response.headers.set("x-request-id", info.id);
    }
    requests.inc({ method: request.method, route, status: String(status) });
    latency.observe({ method: request.method, route }, ms / 1000);
    deps.log.info("request", {
      method: request.method,
      route,
      status,
      ms: Math.round(ms * 100) / 100,
      orgId: info.orgId ?? null,
      requestId: info.id,
    });
    return response;
  };
}
