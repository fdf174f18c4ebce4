import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chunkPages, normalisePageText, WORD_CHARS_MAX } from "../../src/documents/chunk";
import { PASSAGE_WORDS_MAX, wordCount } from "../../src/search/corpus/structure";
import { createPdfParser, PdfRejectedError } from "../../src/documents/pdf/parser";
import { READY_LINE } from "../../src/documents/pdf/protocol";
import { requireBinary } from "../helpers/binary";
import * as hostile from "../fixtures/pdf/hostile";
import { textPdf } from "../fixtures/pdf/writer";
import { REAL_PDF_DIR, REAL_PDFS } from "./real-pdfs";

const MEMORY_BYTES = 512 * 1024 * 1024;
const parser = createPdfParser({ childrenMax: 2, memoryBytes: MEMORY_BYTES });
afterAll(() => parser.close());
const TIMEOUT_MS = 20_000;

async function rejection(promise: Promise<unknown>): Promise<PdfRejectedError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof PdfRejectedError) return error;
    throw error;
  }
  throw new Error("expected the PDF to be rejected");
}

describe("real PDFs", () => {
  test("every one has its exact page count and its text on the right page", async () => {
    for (const pdf of REAL_PDFS) {
      const bytes = await Bun.file(join(REAL_PDF_DIR, pdf.file)).bytes();
      expect({ file: pdf.file, ...(await parser.inspectPdf(bytes, { timeoutMs: TIMEOUT_MS })) }).toEqual({ file: pdf.file, pages: pdf.pages });
      const texts = await parser.extractPageTexts(bytes, { timeoutMs: TIMEOUT_MS });
      expect(texts).toHaveLength(pdf.pages);
      expect(normalisePageText(texts[pdf.page - 1]!)).toContain(pdf.sentence);
    }
  }, 60_000);
});

describe("hostile PDFs", () => {
  const cases: Array<[string, () => Uint8Array, "invalid_pdf" | "too_many_pages", RegExp]> = [
    ["truncated file", hostile.truncatedPdf, "invalid_pdf", /truncated/],
    ["random bytes", () => hostile.randomBytes(64 * 1024), "invalid_pdf", /not a PDF/],
    ["PDF inside a ZIP", () => hostile.pdfInsideZip(textPdf({ pageCount: 2 })), "invalid_pdf", /not a PDF/],
    ["encrypted, opens without a password", () => hostile.encryptedPdf(""), "invalid_pdf", /encrypted/],
    ["encrypted with a user password", () => hostile.encryptedPdf("secret"), "invalid_pdf", /encrypted/],
    ["zero pages", hostile.zeroPagePdf, "invalid_pdf", /no pages/],
    ["self-referencing page tree", hostile.selfReferencingPdf, "invalid_pdf", /cannot be read|could not be parsed/],
    ["501 pages", () => textPdf({ pageCount: 501 }), "too_many_pages", /501 pages; the maximum is 500/],
    ["10,000 pages", () => textPdf({ pageCount: 10_000 }), "too_many_pages", /10000 pages/],
  ];
  for (const [name, build, code, details] of cases) {
    test(`${name} → ${code}`, async () => {
      const error = await rejection(parser.inspectPdf(build(), { timeoutMs: TIMEOUT_MS }));
      expect(error.code).toBe(code);
      expect(error.details).toMatch(details);
    });
  }

  test("500 pages is accepted, exactly", async () => {
    expect(await parser.inspectPdf(textPdf({ pageCount: 500 }), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 500 });
  });

  test("a page with a 100,000 × 100,000 image is read for its text; the image is never decoded", async () => {
    const pdf = hostile.hugeImagePdf("Staff must shred paper records containing personal data.");
    expect(await parser.inspectPdf(pdf, { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 1 });
    const [text] = await parser.extractPageTexts(pdf, { timeoutMs: TIMEOUT_MS });
    expect(normalisePageText(text!)).toBe("Staff must shred paper records containing personal data.");
  });
});

describe("the parser child", () => {
  const big = textPdf({ pages: Array.from({ length: 300 }, (_, i) => Array.from({ length: 50 }, (_, l) => `Page ${i} line ${l} of a long policy.`)) });

  test("past its deadline it is killed, the PDF is rejected, and the next parse works", async () => {
    const error = await rejection(parser.extractPageTexts(big, { timeoutMs: 5 }));
    expect(error.code).toBe("invalid_pdf");
    expect(error.details).toMatch(/within 5 ms/);
    expect(await parser.inspectPdf(textPdf({ pageCount: 3 }), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 3 });
  });

  test("aborting kills it at once and rejects with the abort reason", async () => {
    const controller = new AbortController();
    const parse = parser.extractPageTexts(big, { timeoutMs: TIMEOUT_MS, signal: controller.signal });
    setTimeout(() => controller.abort(new Error("document deleted")), 20);
    await expect(parse).rejects.toThrow("document deleted");
    await parse.catch(() => undefined);
    expect(await parser.inspectPdf(textPdf({ pageCount: 2 }), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 2 });
  });

  test("a child that dies without answering makes the PDF invalid, not the server", async () => {
    const dies = `console.log(${JSON.stringify(READY_LINE)}); process.stdin.once("data", () => process.exit(1))`;
    const dying = createPdfParser({ childrenMax: 1, memoryBytes: MEMORY_BYTES, childArgv: [process.execPath, "-e", dies] });
    const error = await rejection(dying.inspectPdf(textPdf({ pageCount: 1 }), { timeoutMs: TIMEOUT_MS }));
    expect(error).toMatchObject({ code: "invalid_pdf", details: "the PDF could not be parsed" });
    dying.close();
  });

  test("parses run side by side up to the child limit", async () => {
    const pdfs = Array.from({ length: 5 }, (_, i) => textPdf({ pageCount: i + 1 }));
    const counts = await Promise.all(pdfs.map((pdf) => parser.inspectPdf(pdf, { timeoutMs: TIMEOUT_MS })));
    expect(counts.map((c) => c.pages)).toEqual([1, 2, 3, 4, 5]);
  });
});

/** Pids of this process's live PDF children. */
function pdfChildPids(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("__pdf") || !status.includes(`\nPPid:\t${process.pid}\n`)) continue;
      if (!/^State:\s+Z/m.test(status)) pids.push(Number(entry));
    } catch {
      // Exited while we looked.
    }
  }
  return pids;
}

/** Pids of PDF children started from now on: children of the other parsers in this file are not theirs. */
function pdfChildPidsFromNowOn(): () => number[] {
  const others = new Set(pdfChildPids());
  return () => pdfChildPids().filter((pid) => !others.has(pid));
}

/** Waits up to TIMEOUT_MS for children other than `old` among `pids()`, and returns them. */
async function replacementsOf(old: number | undefined, pids: () => number[]): Promise<number[]> {
  let replaced: number[] = [];
  for (let waitedMs = 0; waitedMs < TIMEOUT_MS && replaced.length === 0; waitedMs += 20) {
    await Bun.sleep(20);
    replaced = pids().filter((pid) => pid !== old);
  }
  return replaced;
}

describe("warm parser children", () => {
  test("warmUp starts a ready child that outlives its idle time, serves the first PDF, and is replaced when killed", async () => {
    const pdfChildPidsOfWarm = pdfChildPidsFromNowOn();
    const warm = createPdfParser({ childrenMax: 2, memoryBytes: MEMORY_BYTES, idleMs: 50 });
    try {
      await warm.warmUp(1);
      const [first, ...more] = pdfChildPidsOfWarm();
      expect(more).toEqual([]);
      await Bun.sleep(300);
      expect(pdfChildPidsOfWarm()).toEqual([first!]);
      expect(await warm.inspectPdf(textPdf({ pageCount: 2 }), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 2 });
      expect(pdfChildPidsOfWarm()).toEqual([first!]);

      const big = textPdf({ pages: Array.from({ length: 300 }, (_, i) => Array.from({ length: 50 }, (_, l) => `Page ${i} line ${l}.`)) });
      await rejection(warm.extractPageTexts(big, { timeoutMs: 5 }));
      expect(await replacementsOf(first, pdfChildPidsOfWarm)).toHaveLength(1);
      expect(pdfChildPidsOfWarm()).not.toContain(first!);
    } finally {
      warm.close();
    }
    await Bun.sleep(100);
    expect(pdfChildPidsOfWarm()).toEqual([]);
  });

  test("a warm child killed by a deadline before it was ready is replaced, and the PDF gets the deadline's error", async () => {
    const pdfChildPidsOfWarm = pdfChildPidsFromNowOn();
    const warm = createPdfParser({ childrenMax: 2, memoryBytes: MEMORY_BYTES });
    try {
      // Not awaited: the request takes the warm child while it is still loading pdf.js.
      void warm.warmUp(1);
      const [starting] = pdfChildPidsOfWarm();
      const error = await rejection(warm.inspectPdf(textPdf({ pageCount: 1 }), { timeoutMs: 5 }));
      expect(error).toMatchObject({ code: "invalid_pdf", details: "the PDF could not be parsed within 5 ms" });
      expect(await replacementsOf(starting, pdfChildPidsOfWarm)).toHaveLength(1);
      expect(await warm.inspectPdf(textPdf({ pageCount: 2 }), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 2 });
    } finally {
      warm.close();
    }
  });

  test("a child that cannot start is not started again and again", async () => {
    const log = join(tmpdir(), `regkb-pdf-starts-${process.pid}`);
    const starts = () => (existsSync(log) ? readFileSync(log, "utf8").length : 0);
    const fails = `require("node:fs").appendFileSync(${JSON.stringify(log)}, "x"); process.exit(1)`;
    const broken = createPdfParser({ childrenMax: 2, memoryBytes: MEMORY_BYTES, childArgv: [process.execPath, "-e", fails] });
    try {
      await broken.warmUp(2);
      await Bun.sleep(500);
      expect(starts()).toBe(2);
    } finally {
      broken.close();
      rmSync(log, { force: true });
    }
  });
});

/** Peak resident memory of this process's PDF children (VmHWM), in bytes. */
function pdfChildrenPeakBytes(): number {
  let peak = 0;
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      if (!readFileSync(`/proc/${entry}/cmdline`, "utf8").includes("__pdf") || !status.includes(`\nPPid:\t${process.pid}\n`)) continue;
      peak = Math.max(peak, Number(/^VmHWM:\s+(\d+) kB$/m.exec(status)![1]) * 1024);
    } catch {
      // Exited while we looked.
    }
  }
  return peak;
}

describe("decompression bombs and memory", () => {
  const GIB = 1024 ** 3;

  test("a 4 MB PDF whose content inflates to 4 GiB is refused within seconds, and the parser stays small", async () => {
    const bomb = hostile.contentBombPdf(4096);
    expect(bomb.byteLength).toBeLessThan(5 * 1024 * 1024);
    // Counting pages never reads a content stream; extracting the text does.
    expect(await parser.inspectPdf(bomb, { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 1 });
    const startedMs = performance.now();
    const error = await rejection(parser.extractPageTexts(bomb, { timeoutMs: TIMEOUT_MS }));
    expect(error).toMatchObject({ code: "invalid_pdf", details: "the PDF's compressed streams expand to more than 128 MiB (a decompression bomb?)" });
    expect(performance.now() - startedMs).toBeLessThan(TIMEOUT_MS);
    expect(pdfChildrenPeakBytes()).toBeLessThan(GIB);
    expect(await parser.extractPageTexts(textPdf({ pages: [["Still parsing."]] }), { timeoutMs: TIMEOUT_MS })).toEqual(["Still parsing."]);
  }, 60_000);

  test("the 1 GiB variant is refused too, as is a bomb read while counting pages (metadata)", async () => {
    const content = await rejection(parser.extractPageTexts(hostile.contentBombPdf(1024), { timeoutMs: TIMEOUT_MS }));
    expect(content).toMatchObject({ code: "invalid_pdf", details: expect.stringContaining("expand to more than 128 MiB") });
    const metadata = await rejection(parser.inspectPdf(hostile.metadataBombPdf(1024), { timeoutMs: TIMEOUT_MS }));
    expect(metadata).toMatchObject({ code: "invalid_pdf", details: expect.stringContaining("expand to more than 128 MiB") });
    expect(pdfChildrenPeakBytes()).toBeLessThan(GIB);
  }, 60_000);

  test("a PDF that needs more memory than a parse may use is refused; the next one parses", async () => {
    const small = createPdfParser({ childrenMax: 1, memoryBytes: 64 * 1024 * 1024 });
    try {
      const error = await rejection(small.extractPageTexts(hostile.paddedPdf(300, 100), { timeoutMs: TIMEOUT_MS }));
      expect(error).toMatchObject({ code: "invalid_pdf", details: "the PDF needs more than the 64 MiB of memory a parse may use" });
      expect(await small.inspectPdf(hostile.paddedPdf(3, 1), { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 3 });
    } finally {
      small.close();
    }
  }, 60_000);
});

test("the compiled binary is its own PDF child (pdf.js and its worker are bundled; nothing is fetched)", async () => {
  const compiled = createPdfParser({ childrenMax: 1, memoryBytes: MEMORY_BYTES, childArgv: [requireBinary(), "__pdf"] });
  try {
    const wisconsin = REAL_PDFS.find((p) => p.file === "wisconsin_134.pdf")!;
    const bytes = await Bun.file(join(REAL_PDF_DIR, wisconsin.file)).bytes();
    expect(await compiled.inspectPdf(bytes, { timeoutMs: TIMEOUT_MS })).toEqual({ pages: 26 });
    const texts = await compiled.extractPageTexts(bytes, { timeoutMs: TIMEOUT_MS });
    expect(normalisePageText(texts[25]!)).toContain(wisconsin.sentence);
    expect((await rejection(compiled.inspectPdf(hostile.encryptedPdf(""), { timeoutMs: TIMEOUT_MS }))).code).toBe("invalid_pdf");
  } finally {
    compiled.close();
  }
});

describe("chunking", () => {
  test("passages stay on their page, cite it, and are numbered across the document", () => {
    const long = Array.from({ length: 120 }, (_, i) => `Sentence number ${i} explains one duty of the controller.`).join(" ");
    const chunks = chunkPages("policy.pdf", ["Short first page.", "Short second page.", "", long]);
    // Two short pages are never merged, though the policy merges short neighbours within a page.
    expect(chunks.slice(0, 2)).toEqual([
      { text: "Short first page.", citationPath: "policy.pdf#page=1", position: 0 },
      { text: "Short second page.", citationPath: "policy.pdf#page=2", position: 1 },
    ]);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.slice(2).every((c) => c.citationPath === "policy.pdf#page=4")).toBe(true);
    expect(chunks.map((c) => c.position)).toEqual(chunks.map((_, i) => i));
    for (const c of chunks) expect(wordCount(c.text)).toBeLessThanOrEqual(PASSAGE_WORDS_MAX);
  });

  test("every sentence of a long page appears whole in some passage (windows cut between sentences, with overlap)", () => {
    const sentences = Array.from({ length: 160 }, (_, i) => `Rule ${i}: records are kept for ${i + 1} years.`);
    const pieces = chunkPages("rules.pdf", [sentences.join(" ")]).map((c) => c.text);
    expect(pieces.length).toBeGreaterThan(2);
    for (const sentence of sentences) expect(pieces.some((p) => p.includes(sentence))).toBe(true);
    // Text is kept on one line, as the page was.
    for (const p of pieces) expect(p).not.toContain("\n");
  });

  test("zero-width characters and soft hyphens vanish; whitespace collapses", () => {
    expect(normalisePageText("per\u200bsonal  data\n\nbreach\u00ad es")).toBe("personal data breach es");
  });

  test("a word hyphenated across a line break is joined; other hyphens stay", () => {
    expect(normalisePageText("this sec-\ntion applies to e-mail and Anti-\nMoney rules")).toBe("this section applies to e-mail and Anti- Money rules");
  });

  test("a page of one unbroken token is still cut to size", () => {
    const token = "x".repeat(40_000);
    const pieces = chunkPages("garbage.pdf", [token]).map((c) => c.text);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((p) => p.length <= PASSAGE_WORDS_MAX * (WORD_CHARS_MAX + 1))).toBe(true);
    expect(pieces.join("").replace(/ /g, "").length).toBe(token.length);
  });
});
