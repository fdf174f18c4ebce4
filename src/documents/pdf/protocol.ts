/**
 * Wire format between the parser (parent) and a PDF child process.
 * Environment:      the limits below, set once when the child starts.
 * Start (stdout):   READY_LINE once the child has loaded pdf.js and limited itself.
 * Request (stdin):  one JSON line `PdfChildRequest`, then exactly `bytes` raw PDF bytes.
 * Reply (stdout):   one JSON line `PdfChildReply` per request, in request order.
 */
export type PdfChildMode = "inspect" | "extract";

export interface PdfChildRequest {
  mode: PdfChildMode;
  bytes: number;
}

export type PdfRejectionCode = "invalid_pdf" | "too_many_pages";

export type PdfChildReply =
  | { ok: true; pages: number; texts?: string[] }
  | { ok: false; code: PdfRejectionCode; details: string };

/** The header line of a request is tiny; anything longer is a broken stream. */
export const REQUEST_HEADER_BYTES_MAX = 1024;
/** A request body above this is refused by the child (the upload limit is far lower). */
export const REQUEST_BODY_BYTES_MAX = 1024 * 1024 * 1024;

export const READY_LINE = '{"ready":true}';

/** What the parent tells a child through its environment. */
export const CHILD_ENV = {
  /** The server's pid: the child dies with it. */
  parentPid: "REGKB_PDF_PARENT_PID",
  /** Memory the child may take beyond its idle size while it parses one PDF. */
  memoryBytes: "REGKB_PDF_MEMORY_BYTES",
  /** Bytes one document's streams may decode to. */
  decodedBytesMax: "REGKB_PDF_DECODED_BYTES_MAX",
} as const;
