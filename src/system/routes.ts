import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { VERSION } from "../version";

/** Unauthenticated operational endpoints, kept out of the public API document. */
export function systemRoutes(deps: Deps) {
  return new Elysia()
    .get(
      "/healthz",
      ({ set }) => {
        let databaseOk = false;
        try {
          databaseOk = deps.db.query<{ ok: number }, []>("SELECT 1 AS ok").get()?.ok === 1;
        } catch {
          databaseOk = false;
        }
        const storage = deps.storage.state();
        const ok = databaseOk && storage === "ok";
        set.status = ok ? 200 : 503;
        const index = deps.replica ? { indexBehindMs: deps.replica.behindMs() } : {};
        return { status: ok ? "ok" : "degraded", version: VERSION, database: databaseOk ? "ok" : "unavailable", storage, ...index };
      },
      { detail: { hide: true } },
    )
    .get("/metrics", () => new Response(deps.metrics.render(), { headers: { "content-type": "text/plain; version=0.0.4" } }), {
      detail: { hide: true },
    });
}
