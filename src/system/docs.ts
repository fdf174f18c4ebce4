import { Elysia } from "elysia";
import { PUBLIC_HIDDEN } from "../http/operation";
import { readAsset } from "../platform/assets";
import scalarBundlePath from "../../node_modules/@scalar/api-reference/dist/browser/standalone.js" with { type: "file" };

/**
 * The API reference page. Scalar's standalone bundle is embedded in the binary and served
 * from here; default fonts, telemetry and the hosted proxy are turned off so the page
 * makes no request outside this server (air-gapped installs).
 */
const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>regkb API reference</title>
  <style>body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}</style>
</head>
<body>
  <div id="app"></div>
  <script src="/v1/docs/assets/scalar.js"></script>
  <script>
    Scalar.createApiReference("#app", {
      url: "/v1/openapi.json",
      withDefaultFonts: false,
      telemetry: false,
      hideClientButton: true,
      showDeveloperTools: "never",
      agent: { disabled: true },
      mcp: { disabled: true },
      documentDownloadType: "json"
    });
  </script>
</body>
</html>`;

export function docsRoutes() {
  // Packed in the binary (platform/assets.ts); unpacked on the first visit (~10 ms) and kept.
  let scalarBundle: Promise<Uint8Array<ArrayBuffer>> | undefined;
  return new Elysia()
    .get("/v1/docs", () => new Response(DOCS_HTML, { headers: { "content-type": "text/html; charset=utf-8" } }), {
      detail: PUBLIC_HIDDEN,
    })
    .get(
      "/v1/docs/assets/scalar.js",
      async () =>
        new Response(await (scalarBundle ??= readAsset(scalarBundlePath)), {
          headers: { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=86400" },
        }),
      { detail: PUBLIC_HIDDEN },
    );
}
