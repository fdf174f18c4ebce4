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

export const NEXT_PATH_LENGTH_MAX = 512;
/**
 * A plain local path and query: one leading "/", then only URL characters that need no
 * escaping (RFC 3986 pchar, "/", "?") and well-formed %XX. No control characters (URL
 * parsers drop tabs and newlines, turning "/\t/evil.com" into "//evil.com"), no backslash,
 * no space, nothing outside ASCII (not a valid header value).
 */
const PLAIN_PATH = /^\/(?![/\\])(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
const PROBE_ORIGIN = "http://regkb.invalid";

/** Only plain local paths may be redirect targets after sign-in (no open redirect); anything else is "/". */
export function safeNextPath(raw: string | null | undefined): string {
  if (!raw || raw.length > NEXT_PATH_LENGTH_MAX || !PLAIN_PATH.test(raw)) return "/";
  // Belt and braces: the target must resolve to this site whatever the URL parser makes of it.
  return new URL(raw, PROBE_ORIGIN).origin === PROBE_ORIGIN ? raw : "/";
}
