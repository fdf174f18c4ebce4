/**
 * Parent side of PDF parsing. Parsing runs in child processes (`regkb __pdf`, child.ts),
 * never on the event loop. Children are kept warm (starting one and loading pdf.js costs
 * 0.5–1 s) and serve one request at a time; a child that passes its deadline, is aborted, or dies is killed
 * and replaced, so a hostile PDF costs at most one child and one deadline.
 */
import { watchResidentMemory, type MemoryWatch } from "../../platform/memory-watch";
import { selfArgv } from "../../platform/self";
import { CHILD_ENV, READY_LINE, type PdfChildMode, type PdfChildReply, type PdfChildRequest, type PdfRejectionCode } from "./protocol";

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
  /**
   * Starts children until `children` are alive and waits until they are ready, then keeps
   * that many alive (an idle one is not retired, a retired or killed one is replaced), so the
   * first document after a start or a quiet spell does not pay for loading pdf.js. Never throws.
   */
  warmUp(children: number): Promise<void>;
  /** Kills every child and stops keeping any warm (server shutdown, tests). Children also exit when this process dies. */
  close(): void;
}

export interface PdfParserOptions {
  /** argv that starts a child; default `regkb __pdf` (the binary itself, or `bun src/main.ts`). */
  childArgv?: string[];
  /** Children alive at once; each holds pdf.js and one PDF (~60–200 MB), so keep this small. */
  childrenMax: number;
  /**
   * Memory a child may take beyond its idle size while it parses one PDF (the file
   * included); past it the PDF is refused. A document's streams may decode to a quarter of it.
   */
  memoryBytes: number;
  /** Largest reply accepted from a child (the texts of up to 500 pages). */
  replyBytesMax?: number;
  /** A child serves this many requests, then is replaced, so pdf.js leaks cannot accumulate. */
  requestsPerChildMax?: number;
  /** An idle child exits after this long, returning its memory. */
  idleMs?: number;
}

export function createPdfParser(options: PdfParserOptions): PdfParser {
  const childArgv = options.childArgv ?? [...selfArgv(), "__pdf"];
  const childEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    NODE_ENV: "production",
    [CHILD_ENV.parentPid]: String(process.pid),
    [CHILD_ENV.memoryBytes]: String(options.memoryBytes),
    [CHILD_ENV.decodedBytesMax]: String(Math.floor(options.memoryBytes / DECODED_SHARE_OF_MEMORY)),
  };

  const replyBytesMax = options.replyBytesMax ?? 64 * 1024 * 1024;
  const requestsPerChildMax = options.requestsPerChildMax ?? 200;
  const idleMs = options.idleMs ?? 60_000;
  const slots = createSlots(options.childrenMax);
  const idle: PdfChild[] = [];
  const alive = new Set<PdfChild>();
  /** Children kept alive between documents (warmUp); 0 until warmUp, and again after close. */
  let warmChildren = 0;

  function spawn(): PdfChild {
    const child = new PdfChild(childArgv, childEnv, replyBytesMax, options.memoryBytes);
    alive.add(child);
    void child.process.exited.then(async () => {
      alive.delete(child);
      // Replace a warm child that was retired or killed (even while it started), but never one
      // that failed to start by itself: a build whose parser cannot start must not respawn it in a loop.
      if (child.killedWhileStarting || (await child.started())) keepWarm();
    });
    return child;
  }

  function keepWarm(): void {
    while (alive.size < warmChildren) giveBack(spawn());
  }

  function takeChild(): PdfChild {
    for (let child = idle.pop(); child; child = idle.pop()) {
      clearTimeout(child.idleTimer);
      if (!child.dead) return child;
    }
    return spawn();
  }

  function giveBack(child: PdfChild): void {
    if (child.dead || child.requestsServed >= requestsPerChildMax) {
      child.kill();
      return;
    }
    const retire = () => {
      if (alive.size <= warmChildren) {
        child.idleTimer = setTimeout(retire, idleMs);
        child.idleTimer.unref();
        return;
      }
      const index = idle.indexOf(child);
      if (index >= 0) idle.splice(index, 1);
      child.kill();
    };
    child.idleTimer = setTimeout(retire, idleMs);
    child.idleTimer.unref();
    idle.push(child);
  }

  async function run(mode: PdfChildMode, bytes: Uint8Array, parse: PdfParseOptions): Promise<PdfChildReply & { ok: true }> {
    checkEnvelope(bytes);
    const release = await slots.acquire(parse.signal);
    const child = takeChild();
    let reply: PdfChildReply;
    try {
      reply = await child.request(mode, bytes, parse);
    } catch (error) {
      child.kill();
      throw error;
    } finally {
      giveBack(child);
      release();
    }
    if (!reply.ok) throw new PdfRejectedError(reply.code, reply.details);
    return reply;
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
    async warmUp(children) {
      warmChildren = Math.max(0, Math.min(children, options.childrenMax));
      keepWarm();
      await Promise.all([...alive].map((child) => child.started()));
    },
    close() {
      warmChildren = 0;
      for (const child of alive) child.kill();
      idle.length = 0;
    },
  };
}

/**
 * pdf.js can hold a decoded stream twice while it copies it, beside the file itself and
 * everything else it builds, so a document's streams may decode to a quarter of the memory.
 */
const DECODED_SHARE_OF_MEMORY = 4;

const PDF_MAGIC = "%PDF-";
const EOF_MARKER = "%%EOF";
/** PDF readers accept the end-of-file marker within the last 1024 bytes (trailing junk). */
const EOF_WINDOW_BYTES = 1024;

/**
 * Cheap checks before a child ever sees the bytes. pdf.js is forgiving: it finds a PDF
 * stored inside a ZIP and rebuilds a truncated file's cross-reference table, which would
 * bill and index a fragment. A file must start with `%PDF-` and end with `%%EOF`.
 */
function checkEnvelope(bytes: Uint8Array): void {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, PDF_MAGIC.length)).toString("latin1");
  if (head !== PDF_MAGIC) throw new PdfRejectedError("invalid_pdf", "the file is not a PDF (it does not start with %PDF-)");
  const tailStart = Math.max(0, bytes.byteLength - EOF_WINDOW_BYTES);
  const tail = Buffer.from(bytes.buffer, bytes.byteOffset + tailStart, bytes.byteLength - tailStart).toString("latin1");
  if (!tail.includes(EOF_MARKER)) throw new PdfRejectedError("invalid_pdf", "the PDF is truncated (no %%EOF at its end)");
}

/** One `regkb __pdf` process and a reader of its reply lines. */
class PdfChild {
  readonly process: Bun.Subprocess<"pipe", "pipe", "ignore">;
  dead = false;
  /** Killed by this process (a deadline, an abort, close) before it said whether it started. */
  killedWhileStarting = false;
  private startSettled = false;
  requestsServed = 0;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly lines: AsyncGenerator<string | null>;
  /** True once the child has loaded pdf.js, passed its start-up check and limited itself. */
  private readonly ready: Promise<boolean>;

  constructor(
    argv: string[],
    env: Record<string, string>,
    replyBytesMax: number,
    private readonly memoryBytes: number,
  ) {
    this.process = Bun.spawn(argv, { stdin: "pipe", stdout: "pipe", stderr: "ignore", env });
    // Idle children must not keep the server (or a test run) alive.
    this.process.unref();
    void this.process.exited.then(() => {
      this.dead = true;
    });
    this.lines = readLines(this.process.stdout, replyBytesMax);
    this.ready = this.lines
      .next()
      .then(
        (first) => first.value === READY_LINE,
        () => false,
      )
      .finally(() => {
        this.startSettled = true;
      });
  }

  /** Resolves once the child is ready (true) or has failed to start (false). */
  started(): Promise<boolean> {
    return this.ready;
  }

  async request(mode: PdfChildMode, bytes: Uint8Array, parse: PdfParseOptions): Promise<PdfChildReply> {
    parse.signal?.throwIfAborted();
    this.requestsServed++;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      this.kill();
    }, parse.timeoutMs);
    const onAbort = () => this.kill();
    parse.signal?.addEventListener("abort", onAbort, { once: true });
    let memoryWatch: MemoryWatch | undefined;
    try {
      if (!(await this.ready)) {
        this.kill();
        // Killed before it was ready, by the deadline or an abort: that is the answer, not a failed start.
        parse.signal?.throwIfAborted();
        if (timedOut) return deadlinePassed(parse.timeoutMs);
        // Not the file's fault: this build's parser cannot start (logged as an internal error).
        throw new Error("the PDF parser child failed to start");
      }
      // Measured from the idle child, by the parent, like the deadline: the rlimits the child
      // set on itself cannot see the memory JavaScriptCore reserved at start-up (memory-watch.ts).
      let memoryExceeded = false;
      memoryWatch = watchResidentMemory(this.process.pid, this.memoryBytes, () => {
        memoryExceeded = true;
        this.kill();
      });
      const header: PdfChildRequest = { mode, bytes: bytes.byteLength };
      const sink = this.process.stdin;
      sink.write(`${JSON.stringify(header)}\n`);
      sink.write(bytes);
      // A child that dies mid-write makes flush reject; the line read below reports it.
      await Promise.resolve(sink.flush()).catch(() => undefined);
      const next = await this.lines.next();
      // However late the reply is read, the parse's peak decides (a sample may not have run since).
      memoryWatch.check();
      parse.signal?.throwIfAborted();
      if (timedOut) return deadlinePassed(parse.timeoutMs);
      if (memoryExceeded) {
        return { ok: false, code: "invalid_pdf", details: `the PDF needs more than the ${mib(this.memoryBytes)} MiB of memory a parse may use` };
      }
      const line = next.done ? null : next.value;
      if (line === null) {
        this.kill();
        // pdf.js (or the runtime under it) died on this input, or it answered with a text
        // bomb: either way the file is what is broken.
        return { ok: false, code: "invalid_pdf", details: "the PDF could not be parsed" };
      }
      return JSON.parse(line) as PdfChildReply;
    } finally {
      memoryWatch?.stop();
      clearTimeout(timer);
      parse.signal?.removeEventListener("abort", onAbort);
    }
  }

  kill(): void {
    if (!this.startSettled) this.killedWhileStarting = true;
    this.dead = true;
    clearTimeout(this.idleTimer);
    this.process.kill("SIGKILL");
  }
}

function deadlinePassed(timeoutMs: number): PdfChildReply {
  return { ok: false, code: "invalid_pdf", details: `the PDF could not be parsed within ${timeoutMs} ms` };
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
}

/** Yields stdout line by line; null (then done) when the stream ends or a line passes `bytesMax`. */
async function* readLines(stream: ReadableStream<Uint8Array>, bytesMax: number): AsyncGenerator<string | null> {
  const decoder = new TextDecoder();
  let parts: string[] = [];
  let lineBytes = 0;
  for await (const chunk of stream) {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline >= 0; newline = chunk.indexOf(10, start)) {
      parts.push(decoder.decode(chunk.subarray(start, newline)));
      yield parts.join("");
      parts = [];
      lineBytes = 0;
      start = newline + 1;
    }
    lineBytes += chunk.byteLength - start;
    if (lineBytes > bytesMax) break;
    parts.push(decoder.decode(chunk.subarray(start), { stream: true }));
  }
  yield null;
}

/** A counting semaphore; a waiter leaves the queue when its signal aborts. */
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
      signal?.throwIfAborted();
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
