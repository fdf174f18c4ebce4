import { Elysia } from "elysia";
import type { Deps } from "./deps";
import { errorHandler } from "./http/error-handler";
import { requestInfo } from "./http/request-context";
import { jurisdictionRoutes } from "./jurisdictions/routes";
import { docsRoutes } from "./system/docs";
import { openapiDocument } from "./system/openapi";
import { systemRoutes } from "./system/routes";

/** Wires the capability plugins together; each capability owns its own routes. */
export function buildApp(deps: Deps) {
  return new Elysia()
    .use(errorHandler(deps))
    .onTransform({ as: "global" }, ({ request, route }) => {
      const info = requestInfo(request);
      if (info) info.route = route;
    })
    .use(openapiDocument())
    .use(systemRoutes(deps))
    .use(docsRoutes())
    .use(jurisdictionRoutes(deps));
}

export type App = ReturnType<typeof buildApp>;
