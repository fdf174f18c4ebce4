import type { Deps } from "../deps";

/** JSON bodies are small (code ≤ 65,536 characters, 100 keywords ≤ 1,000 each); uploads have their own limit. */
export const JSON_BODY_BYTES_MAX = 1024 * 1024;
/** Multipart framing around the uploaded file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

type Handler = (request: Request) => Response | Promise<Response>;

/**
 * Refuses a body whose declared length is over the limit with the JSON 413 before any
 * of it is read. Bodies without a Content-Length are capped by Bun itself
 * (maxRequestBodySize) and, for uploads, by the documents route's counting reader.
 */
export function limitBody(deps: Deps, handle: Handler): Handler {
  const uploadBytesMax = deps.config.maxUploadBytes + MULTIPART_OVERHEAD_BYTES;
  return (request) => {
    const declared = Number(request.headers.get("content-length") ?? 0);
    const isUpload = (request.headers.get("content-type") ?? "").startsWith("multipart/form-data");
    const bytesMax = isUpload ? uploadBytesMax : JSON_BODY_BYTES_MAX;
    if (declared > bytesMax) {
      return Response.json(
        { error: "payload_too_large", details: `request body is ${declared} bytes; the limit is ${bytesMax} bytes` },
        { status: 413, headers: { connection: "close" } },
      );
    }
    return handle(request);
  };
}
