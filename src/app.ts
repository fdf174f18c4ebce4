import { Elysia } from "elysia";
import { creditRoutes, stripeWebhookRoutes } from "./billing/routes";
import { dashboardRoutes } from "./dashboard/routes";
import type { Deps } from "./deps";
import { documentRoutes } from "./documents/routes";
import { executionsRoutes } from "./executions/routes";
import { apiGuard } from "./http/api-guard";
import { bodyLimit } from "./http/body-limit";
import { errorHandler } from "./http/error-handler";
import { requestInfo } from "./http/request-context";
import { RouteTable } from "./http/route-table";
import { jurisdictionRoutes } from "./jurisdictions/routes";
import { mcpRoutes } from "./mcp/routes";
import { registerRunKinds } from "./run-kinds";
import { searchRoutes } from "./search/routes";
import { screeningRoutes } from "./screenings/routes";
import { docsRoutes } from "./system/docs";
import { openapiRoutes } from "./system/openapi";
import { systemRoutes } from "./system/routes";

/** Wires the capability plugins together; each capability owns its own routes. */
export function buildApp(deps: Deps) {
  registerRunKinds(deps);
  const routes = new RouteTable();
  const app = new Elysia()
    .use(errorHandler(deps))
    .use(apiGuard(deps, routes))
    .use(bodyLimit(deps))
    .onTransform({ as: "global" }, ({ request, route }) => {
      const info = requestInfo(request);
      if (info) info.route = route;
    })
    .use(openapiRoutes(routes))
    .use(systemRoutes(deps))
    .use(docsRoutes())
    .use(jurisdictionRoutes(deps))
    .use(searchRoutes(deps))
    .use(screeningRoutes(deps))
    .use(documentRoutes(deps))
    .use(executionsRoutes(deps))
    .use(creditRoutes(deps))
    .use(stripeWebhookRoutes(deps))
    .use(mcpRoutes(deps))
    .use(dashboardRoutes(deps));
  // Read on the first request, once every route (including any added to the returned app) exists.
  routes.readFrom(() => app.routes);
  return app;
}

export type App = ReturnType<typeof buildApp>;
