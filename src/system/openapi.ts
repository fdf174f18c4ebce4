import { openapi } from "@elysiajs/openapi";
import { VERSION } from "../version";

const DESCRIPTION = `Prepaid, JSON-over-HTTP interface for hybrid (semantic + keyword) search of a
regulatory knowledge base, batch keyword screening, policy PDF ingestion and isolated
Python execution. All money amounts are integers in pence (GBP).

Authentication: \`Authorization: Bearer rk_live_…\` on every /v1 route except this
document and the Stripe webhook. Errors always use the Error body
\`{"error": "<stable_snake_case_code>", "details": "<human text>"}\`.
Every POST accepts an \`Idempotency-Key\` header (≤ 255 characters, kept 24 hours).`;

/** The OpenAPI 3 document served at /v1/openapi.json, generated from the routes' TypeBox schemas. */
export function openapiDocument() {
  return openapi({
    path: "/v1/docs",
    specPath: "/v1/openapi.json",
    provider: null,
    documentation: {
      info: { title: "regkb API", version: "1.0.0", description: DESCRIPTION },
      servers: [{ url: "/", description: `regkb ${VERSION}` }],
      components: {
        securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "Organisation API key rk_live_…" } },
      },
      security: [{ bearer: [] }],
    },
  });
}
