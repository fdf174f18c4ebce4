import css from "./assets/app.css" with { type: "text" };
import js from "./assets/app.js" with { type: "text" };

/**
 * The dashboard's only static files, embedded in the binary as text. Their URLs carry a
 * content hash, so browsers may cache them for a year and still see every new release.
 */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1d4ed8"/><path d="M9 8h8.5a5.5 5.5 0 0 1 1.6 10.8L24 25h-4.6l-4.3-5.8H13V25H9zm4 3.4v4.5h4.3a2.25 2.25 0 0 0 0-4.5z" fill="#fff"/></svg>`;

interface Asset {
  path: string;
  body: string;
  contentType: string;
}

function asset(name: string, ext: string, body: string, contentType: string): Asset {
  const hash = Bun.hash(body).toString(16).slice(0, 10);
  return { path: `/assets/${name}.${hash}.${ext}`, body, contentType };
}

export const ASSETS = {
  css: asset("app", "css", css, "text/css; charset=utf-8"),
  js: asset("app", "js", js, "text/javascript; charset=utf-8"),
  icon: asset("icon", "svg", FAVICON_SVG, "image/svg+xml"),
};

export const LOGO_SVG = FAVICON_SVG.replace("<svg ", '<svg width="28" height="28" aria-hidden="true" focusable="false" ');

const BY_PATH = new Map(Object.values(ASSETS).map((a) => [a.path, a]));

export function assetResponse(path: string): Response | null {
  const found = BY_PATH.get(path);
  if (!found) return null;
  return new Response(found.body, {
    headers: {
      "content-type": found.contentType,
      "cache-control": "public, max-age=31536000, immutable",
      "x-content-type-options": "nosniff",
    },
  });
}
