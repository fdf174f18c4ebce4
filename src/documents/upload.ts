/**
 * Reads a `multipart/form-data` upload without trusting its size: Elysia's own body
 * parsing is off for the route (parse: "none"), the declared Content-Length is checked
 * first, and the stream is counted as it arrives and abandoned as soon as it passes the
 * limit. At most the limit plus a small multipart allowance is ever held in memory.
 */
import { payloadTooLarge, Refusal, unsupportedMediaType, validationFailed } from "../errors";

/** Boundaries, part headers and the jurisdictionSlugs field on top of the file itself. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** The jurisdictionSlugs field: a JSON array of at most this many slugs, this many characters in all. */
export const JURISDICTION_SLUGS_MAX = 100;
export const JURISDICTION_SLUGS_FIELD_CHARS_MAX = 4096;
/** Stored and shown filenames are cut to this many characters. */
export const FILENAME_CHARS_MAX = 255;

export interface Upload {
  filename: string;
  bytes: Uint8Array;
  /** Undefined when the field was omitted (the document then applies to every search). */
  jurisdictionSlugs: string[] | undefined;
}

/**
 * Reads the request body as multipart/form-data: 415 for another media type, 413 as soon as
 * the declared or counted size passes the limit, 400 when it is not parseable multipart.
 */
export async function readMultipart(request: Request, maxUploadBytes: number): Promise<FormData> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw unsupportedMediaType("POST /v1/documents takes multipart/form-data with a `file` part");
  }
  const bodyBytesMax = maxUploadBytes + MULTIPART_OVERHEAD_BYTES;
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > bodyBytesMax) throw payloadTooLarge(maxUploadBytes);

  const body = await readCapped(request.body, bodyBytesMax);
  if (body === null) throw payloadTooLarge(maxUploadBytes);
  try {
    return await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw validationFailed("body: malformed multipart/form-data");
  }
}

/** The upload's parts, validated: `file` (required, within the limit) and `jurisdictionSlugs`. */
export async function uploadFromForm(form: FormData, maxUploadBytes: number): Promise<Upload> {
  const file = form.get("file");
  if (!(file instanceof Blob)) throw validationFailed("body.file: required (the PDF, as a file part)");
  if (file.size > maxUploadBytes) throw payloadTooLarge(maxUploadBytes);
  if (file.size === 0) throw new Refusal("invalid_pdf", "the file is empty");
  return {
    filename: cleanFilename(file instanceof File ? file.name : ""),
    bytes: new Uint8Array(await file.arrayBuffer()),
    jurisdictionSlugs: parseJurisdictionSlugs(form.get("jurisdictionSlugs")),
  };
}

/** Collects a body, or returns null as soon as it passes `bytesMax` (the rest is never read). */
async function readCapped(stream: ReadableStream<Uint8Array> | null, bytesMax: number): Promise<Uint8Array<ArrayBuffer> | null> {
  if (stream === null) return new Uint8Array(0);
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let bytesRead = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    bytesRead += value.byteLength;
    if (bytesRead > bytesMax) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  const body = new Uint8Array(bytesRead);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

function parseJurisdictionSlugs(field: FormDataEntryValue | null): string[] | undefined {
  if (field === null) return undefined;
  if (typeof field !== "string") throw validationFailed("body.jurisdictionSlugs: must be a text field holding a JSON array");
  if (field.length > JURISDICTION_SLUGS_FIELD_CHARS_MAX) {
    throw validationFailed(`body.jurisdictionSlugs: at most ${JURISDICTION_SLUGS_FIELD_CHARS_MAX} characters`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(field);
  } catch {
    throw validationFailed('body.jurisdictionSlugs: not valid JSON (expected e.g. ["eu","us-ny"])');
  }
  if (!Array.isArray(parsed) || !parsed.every((slug) => typeof slug === "string")) {
    throw validationFailed("body.jurisdictionSlugs: must be a JSON array of strings");
  }
  if (parsed.length > JURISDICTION_SLUGS_MAX) {
    throw validationFailed(`body.jurisdictionSlugs: at most ${JURISDICTION_SLUGS_MAX} slugs`);
  }
  return [...new Set(parsed as string[])];
}

/** The name as the user knows it, minus any client-side path and control characters. */
export function cleanFilename(raw: string): string {
  const base = raw.split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  const chars = [...cleaned];
  const name = chars.length > FILENAME_CHARS_MAX ? chars.slice(0, FILENAME_CHARS_MAX).join("") : cleaned;
  return name === "" ? "document.pdf" : name;
}
