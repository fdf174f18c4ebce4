import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../helpers/server";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ background: false });
});
afterAll(() => server.stop());

describe("operational endpoints", () => {
  test("/healthz answers without auth with version, database and storage state", async () => {
    const res = await server.api("/healthz");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "ok", version: expect.any(String), database: "ok", storage: "ok" });
  });

  test("/metrics counts requests by route and status and exports a latency histogram", async () => {
    const org = server.createOrg();
    await server.api("/v1/jurisdictions", { key: org.key });
    await server.api("/v1/jurisdictions");
    const res = await server.api("/metrics");
    expect(res.status).toBe(200);
    expect(res.body).toContain('regkb_http_requests_total{method="GET",route="/v1/jurisdictions",status="200"}');
    expect(res.body).toContain('regkb_http_requests_total{method="GET",route="/v1/jurisdictions",status="401"}');
    expect(res.body).toContain("regkb_http_request_duration_seconds_bucket");
  });
});

describe("OpenAPI document and reference page", () => {
  test("openapi.json is OpenAPI 3, version 1.0.0, with the bearer scheme and every /v1 route", async () => {
    const res = await server.api("/v1/openapi.json");
    expect(res.status).toBe(200);
    const doc = res.body;
    expect(doc.openapi).toStartWith("3.");
    expect(doc.info.version).toBe("1.0.0");
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    const documented = new Set(
      Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ":$1")}`),
      ),
    );
    // Every registered /v1 API route (not the docs page itself) appears in the document.
    const appRoutes = (await import("../../src/app")).buildApp(server.deps).routes
      .filter((r) => r.path.startsWith("/v1/") && !r.path.startsWith("/v1/docs") && r.path !== "/v1/openapi.json")
      .map((r) => `${r.method} ${r.path}`);
    expect(appRoutes.length).toBeGreaterThan(0);
    for (const route of appRoutes) expect(documented).toContain(route);
    for (const [, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const op of Object.values(ops)) {
        // Unauthenticated operations (the Stripe webhook) declare `security: []`.
        if (Array.isArray(op.security) && op.security.length === 0) continue;
        expect(Object.keys(op.responses)).toContain("401");
      }
      // Every paid or creating POST is retry-safe and says so.
      if (ops.post && !(Array.isArray(ops.post.security) && ops.post.security.length === 0)) {
        const resolve = (p: { $ref?: string; name?: string }) => (p.$ref ? doc.components.parameters[p.$ref.split("/").pop()!] : p);
        expect(ops.post.parameters.map((p: { $ref?: string }) => resolve(p).name)).toContain("Idempotency-Key");
      }
    }
  });

  test("the docs page and its script are served locally with no external URL in the page", async () => {
    const page = await server.api("/v1/docs");
    expect(page.status).toBe(200);
    expect(page.body).toContain("/v1/docs/assets/scalar.js");
    expect(page.body).not.toMatch(/https?:\/\//);
    const script = await fetch(`${server.url}/v1/docs/assets/scalar.js`);
    expect(script.status).toBe(200);
    expect((await script.text()).length).toBeGreaterThan(100_000);
  });
});
