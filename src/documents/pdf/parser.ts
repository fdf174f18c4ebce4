/**
 * Parent side of PDF parsing: every parse runs in a fresh child process (child.ts) that is
 * killed when it passes its deadline or when the caller aborts. The event loop only moves
 * bytes; a hostile PDF can at worst burn one child's CPU until the deadline.
 */
import { selfArgv } from "../../sys/self";
import type { PdfChildMode, PdfChildReply, PdfRejectionCode } from "./protocol";

/** The PDF was refused for a reason the uploader can act on (maps to a 400). */
export class PdfRejectedError extends Error {
  constructor(
    readonly code: PdfRejectionCode,
    readonly details: string,
  ) {
    super(`${code}: ${details}`);
    this.name = "PdfRejectedError";
  }
}

export interface PdfParseOptions {
  timeoutMs: number;
  /** Aborting kills the child at once (e.g. the document was deleted mid-ingestion). */
  signal?: AbortSignal;
}

export interface PdfParser {
  /** Exact page count, or PdfRejectedError (invalid_pdf / too_many_pages). */
  inspectPdf(bytes: Uint8Array, options: PdfParseOptions): Promise<{ pages: number }>;
  /** The text of every page, in page order (a page without a text layer gives ""). */
  extractPageTexts(bytes: Uint8Array, options: PdfParseOptions): Promise<string[]>;
}

export interface PdfParserOptions {
  /** argv that starts the child; default `regkb __pdf` (the binary itself, or `bun src/main.ts`). */
  childArgv?: string[];
  /** Children alive at once; each holds a PDF and pdf.js (~60–150 MB), so keep this small. */
  childrenMax: number;
  /** Largest reply accepted from a child (the texts of up to 500 pages). */
  replyBytesMax?: number;
}

const REPLY_BYTES_MAX_DEFAULT = 64 * 1024 * 1024;

export function createPdfParser(options: PdfParserOptions): PdfParser {
  const childArgv = options.childArgv ?? [...selfArgv(), "__pdf"];
  const replyBytesMax = options.replyBytesMax ?? REPLY_BYTES_MAX_DEFAULT;
  const slots = createSlots(options.childrenMax);

  async function run(mode: PdfChildMode, bytes: Uint8Array, parse: PdfParseOptions): Promise<PdfChildReply & { ok: true }> {
    const release = await slots.acquire(parse.signal);
    try {
      const reply = await runChild(childArgv, mode, bytes, parse, replyBytesMax);
      if (!reply.ok) throw new PdfRejectedError(reply.code, reply.details);
      return reply;
    } finally {
      release();
    }
  }

  return {
    async inspectPdf(bytes, parse) {
      const reply = await run("inspect", bytes, parse);
      return { pages: reply.pages };
    },
    async extractPageTexts(bytes, parse) {
      const reply = await run("extract", bytes, parse);
      if (!reply.texts || reply.texts.length !== reply.pages) throw new Error("PDF child returned no page texts");
      return reply.texts;
    },
  };
}

async function runChild(
  childArgv: string[],
  mode: PdfChildMode,
  bytes: Uint8Array,
  parse: PdfParseOptions,
  replyBytesMax: number,
): Promise<PdfChildReply> {
  parse.signal?.throwIfAborted();
  const child = Bun.spawn([...childArgv, mode], {
    stdin: bytes,
    stdout: "pipe",
    stderr: "ignore",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", NODE_ENV: "production" },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGKILL");
  }, parse.timeoutMs);
  const onAbort = () => child.kill("SIGKILL");
  parse.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const stdout = await readCapped(child.stdout, replyBytesMax);
    if (stdout === null) child.kill("SIGKILL");
    await child.exited;
    parse.signal?.throwIfAborted();
    if (timedOut) {
      return { ok: false, code: "invalid_pdf", details: `the PDF could not be parsed within ${parse.timeoutMs} ms` };
    }
    if (stdout === null) return { ok: false, code: "invalid_pdf", details: "the PDF's text is larger than the service accepts" };
    if (child.exitCode === 2) throw new Error(`PDF child refused its arguments: ${childArgv.join(" ")} ${mode}`);
    const line = stdout.trim();
    if (child.exitCode !== 0 || line === "") {
      // pdf.js (or the runtime under it) died on this input: the file is what is broken.
      return { ok: false, code: "invalid_pdf", details: "the PDF could not be parsed" };
    }
    return JSON.parse(line) as PdfChildReply;
  } finally {
    clearTimeout(timer);
    parse.signal?.removeEventListener("abort", onAbort);
  }
}

/** Reads a stream as UTF-8 text, or returns null once it passes `bytesMax`. */
async function readCapped(stream: ReadableStream<Uint8Array>, bytesMax: number): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  let bytesRead = 0;
  for await (const chunk of stream) {
    bytesRead += chunk.byteLength;
    if (bytesRead > bytesMax) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** A counting semaphore; waiters leave the queue when their signal aborts. */
function createSlots(slotsMax: number) {
  let inUse = 0;
  const waiters: Array<() => void> = [];
  const release = () => {
    const next = waiters.shift();
    if (next) next();
    else inUse--;
  };
  return {
    acquire(signal?: AbortSignal): Promise<() => void> {
      if (inUse < slotsMax) {
        inUse++;
        return Promise.resolve(release);
      }
      return new Promise((resolve, reject) => {
        const grant = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(release);
        };
        const onAbort = () => {
          const index = waiters.indexOf(grant);
          if (index >= 0) waiters.splice(index, 1);
          reject(signal?.reason);
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        waiters.push(grant);
      });
    },
  };
}
