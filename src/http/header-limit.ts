import { Refusal } from "../errors";

/** The request's headers, names and values, may add up to this many bytes (Node's and Bun's default). */
export const REQUEST_HEADER_BYTES_MAX = 16 * 1024;
/** Bun's own limit in the binary (`--max-http-header-size`): above it Bun answers a bare 431 itself. */
export const BUN_HEADER_BYTES_MAX = 4 * REQUEST_HEADER_BYTES_MAX;

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * Refuses oversized headers with the JSON 431. The binary raises Bun's own header limit
 * to BUN_HEADER_BYTES_MAX (scripts/build.ts), so up to that size the client gets the
 * Error body rather than Bun's bare 431.
 */
export function limitHeaders(handle: Handler): Handler {
  return (request) => {
    let bytes = 0;
    for (const [name, value] of request.headers) bytes += name.length + value.length + 4;
    if (bytes > REQUEST_HEADER_BYTES_MAX) {
      // Before Elysia sees the request, so before its error handler: the Error body is written here.
      const refusal = new Refusal("request_headers_too_large", `request headers are ${bytes} bytes; the limit is ${REQUEST_HEADER_BYTES_MAX} bytes`);
      return new Response(JSON.stringify(refusal.body()), {
        status: refusal.status,
        headers: { "content-type": "application/json; charset=utf-8", connection: "close" },
      });
    }
    return handle(request);
  };
}
