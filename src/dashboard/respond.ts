/**
 * Response helpers for dashboard pages: security headers on every page, no caching of
 * anything that shows an organisation's data, and 303 redirects after a form post.
 */
const BASE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
];

export interface PageOptions {
  status?: number;
  headers?: Record<string, string>;
  cookies?: string[];
  /** Forms on this page may redirect off-site (the hosted checkout), so form-action is left open. */
  allowOffsiteFormRedirect?: boolean;
}

function securityHeaders(allowOffsiteFormRedirect: boolean): Record<string, string> {
  const csp = allowOffsiteFormRedirect ? BASE_CSP : [...BASE_CSP, "form-action 'self'"];
  return {
    "content-security-policy": csp.join("; "),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
  };
}

export function htmlResponse(body: string, options: PageOptions = {}): Response {
  const headers = new Headers({ "content-type": "text/html; charset=utf-8", ...securityHeaders(options.allowOffsiteFormRedirect ?? false) });
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  for (const cookie of options.cookies ?? []) headers.append("set-cookie", cookie);
  return new Response(body, { status: options.status ?? 200, headers });
}

export function redirect(location: string, setCookies: string[] = []): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const cookie of setCookies) headers.append("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" },
  });
}

/** Only local paths may be redirect targets after sign-in (no open redirect). */
export function safeNextPath(raw: string | null | undefined): string {
  if (!raw || raw.length > 512 || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return "/";
  return raw;
}
