/** What the request guards need to know about an API route, read from its registration. */
export interface ApiRoute {
  method: string;
  /** The route's pattern, e.g. `/v1/documents/:id` (the metrics and log label). */
  path: string;
  /** Declares `security: []`: served without an API key (the API document, the Stripe webhook). */
  isPublic: boolean;
  /** Declares a body schema: the body must be `application/json`. */
  takesJson: boolean;
  /** Query parameters declared as integers (their strings are converted strictly). */
  integerQueryFields: string[];
}

/** The parts of an Elysia route (`app.routes`) read here. */
export interface RegisteredRoute {
  method: string;
  path: string;
  hooks?: { body?: unknown; query?: unknown; params?: unknown; response?: unknown; detail?: Record<string, unknown> };
}

export const API_PREFIX = "/v1/";

export function isApiPath(pathname: string): boolean {
  return pathname.startsWith(API_PREFIX) || pathname === "/v1";
}

/**
 * The app's /v1 routes, matched by method and path before Elysia routes the request, so
 * that authentication and the media type are checked before anything is parsed.
 */
export class RouteTable {
  private source?: () => readonly RegisteredRoute[];
  private entries?: { pattern: RegExp; route: ApiRoute }[];
  private byKey?: Map<string, ApiRoute>;

  /** Where the routes come from: the app's, read on first use (when every route exists). */
  readFrom(source: () => readonly RegisteredRoute[]): void {
    this.source = source;
  }

  /** Every registered route, /v1 or not, as Elysia describes it. */
  registered(): readonly RegisteredRoute[] {
    if (!this.source) throw new Error("RouteTable.readFrom() was not called");
    return this.source();
  }

  /** The route a request would reach; HEAD finds the GET route. */
  find(method: string, pathname: string): ApiRoute | undefined {
    const wanted = method === "HEAD" ? "GET" : method;
    const path = pathname.length > 1 && pathname.endsWith("/") ? pathname.slice(0, -1) : pathname;
    return this.load().entries.find((e) => e.route.method === wanted && e.pattern.test(path))?.route;
  }

  /** The route registered under exactly this method and pattern (Elysia's `route`). */
  byPattern(method: string, path: string): ApiRoute | undefined {
    return this.load().byKey.get(`${method === "HEAD" ? "GET" : method} ${path}`);
  }

  private load(): { entries: { pattern: RegExp; route: ApiRoute }[]; byKey: Map<string, ApiRoute> } {
    if (!this.entries || !this.byKey) {
      const routes = this.registered()
        .filter((r) => isApiPath(r.path))
        .map(describeRoute)
        // Elysia prefers a static segment to a parameter: try static patterns first.
        .sort((a, b) => Number(a.path.includes(":")) - Number(b.path.includes(":")));
      this.entries = routes.map((route) => ({ pattern: patternOf(route.path), route }));
      this.byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
    }
    return { entries: this.entries, byKey: this.byKey };
  }
}

function describeRoute(r: RegisteredRoute): ApiRoute {
  const security = r.hooks?.detail?.security;
  const query = r.hooks?.query as { properties?: Record<string, { type?: unknown }> } | undefined;
  return {
    method: r.method,
    path: r.path,
    isPublic: Array.isArray(security) && security.length === 0,
    takesJson: typeof r.hooks?.body === "object" && r.hooks.body !== null,
    integerQueryFields: Object.entries(query?.properties ?? {})
      .filter(([, schema]) => schema.type === "integer")
      .map(([name]) => name),
  };
}

function patternOf(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}
