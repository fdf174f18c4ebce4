import { Elysia } from "elysia";
import { creditRoutes, stripeWebhookRoutes } from "./billing/routes";
import { dashboardRoutes } from "./dashboard/routes";
import type { Deps } from "./deps";
import { documentRoutes } from "./documents/routes";
import { executionsRoutes } from "./executions/routes";
import { errorHandler } from "./http/error-handler";
import { requestInfo } from "./http/request-context";
import { jurisdictionRoutes } from "./jurisdictions/routes";
import { searchRoutes } from "./search/routes";
import { screeningRoutes } from "./screenings/routes";
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
    .use(jurisdictionRoutes(deps))
    .use(searchRoutes(deps))
    .use(screeningRoutes(deps))
    .use(documentRoutes(deps))
    .use(executionsRoutes(deps))
    .use(creditRoutes(deps))
    .use(stripeWebhookRoutes(deps))
    .use(dashboardRoutes(deps));
}

export type App = ReturnType<typeof buildApp>;
