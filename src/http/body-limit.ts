import { Elysia } from "elysia";
import type { Deps } from "../deps";
import { MULTIPART_OVERHEAD_BYTES } from "../documents/upload";
import { payloadTooLarge } from "../errors";

/** JSON bodies are small (code ≤ 65,536 characters, 100 keywords ≤ 1,000 each); uploads have their own limit. */
export const JSON_BODY_BYTES_MAX = 1024 * 1024;
const METHODS_WITH_BODY = new Set(["POST", "PUT", "PATCH"]);

/**
 * Refuses a body whose declared length is over the limit with the JSON 413 before any of
 * it is read (after apiGuard: an anonymous /v1 request is a 401 whatever its size). Bodies
 * without a Content-Length are capped by Bun itself (maxRequestBodySize) and, for uploads,
 * by the documents route's counting reader.
 */
export function bodyLimit(deps: Deps) {
  const uploadBytesMax = deps.config.maxUploadBytes + MULTIPART_OVERHEAD_BYTES;
  return new Elysia({ name: "regkb.body-limit" }).onRequest(({ request }) => {
    // No GET, HEAD, DELETE or OPTIONS route reads a body: theirs are never buffered.
    if (!METHODS_WITH_BODY.has(request.method)) return;
    const declared = Number(request.headers.get("content-length") ?? 0);
    const isUpload = (request.headers.get("content-type") ?? "").startsWith("multipart/form-data");
    const bytesMax = isUpload ? uploadBytesMax : JSON_BODY_BYTES_MAX;
    if (declared > bytesMax) {
      throw payloadTooLarge(bytesMax, declared, { connection: "close" });
    }
  });
}
