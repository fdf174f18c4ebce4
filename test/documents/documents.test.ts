import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { getBalance, topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { documentIngestSpec, NO_TEXT_LAYER_MESSAGE } from "../../src/documents/ingest";
import { findDocument } from "../../src/documents/store";
import { getRunById } from "../../src/jobs/store";
import { resolveJurisdictions, searchKnowledgeBase } from "../../src/search/service";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import * as hostile from "../fixtures/pdf/hostile";
import { policyPdf, textPdf } from "../fixtures/pdf/writer";
import { REAL_PDF_DIR, REAL_PDFS } from "./real-pdfs";

const MAX_UPLOAD_BYTES = 4 * 1024 * 1024;
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ env: { REGKB_MAX_UPLOAD_BYTES: String(MAX_UPLOAD_BYTES) } });
});
afterAll(async () => {
  await server.stop();
  server.deps.pdf.close();
});

function fundedOrg(pence = 10_000, jurisdictions?: string[]): TestOrg {
  const org = server.createOrg({ jurisdictions });
  if (pence > 0) topUp(server.deps.db, { orgId: org.orgId, amountPence: pence, key: ledgerKeys.operatorTopUp(org.orgId, "test"), description: "test credit", nowMs: Date.now() });
  return org;
}

function upload(org: TestOrg, bytes: Uint8Array, filename = "policy.pdf", jurisdictionSlugs?: string, headers?: Record<string, string>) {
  const form = new FormData();
  form.append("file", new File([bytes as Uint8Array<ArrayBuffer>], filename, { type: "application/pdf" }));
  if (jurisdictionSlugs !== undefined) form.append("jurisdictionSlugs", jurisdictionSlugs);
  return server.api("/v1/documents", { key: org.key, method: "POST", body: form, headers });
}

async function settled(org: TestOrg, id: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.api(`/v1/documents/${id}`, { key: org.key });
    if (res.body.document?.status !== "processing") return res.body.document;
    if (Date.now() > deadline) throw new Error(`document ${id} still processing`);
    await Bun.sleep(25);
  }
}

const available = (org: TestOrg) => getBalance(server.deps.db, org.orgId).availablePence;
const storedFiles = (org: TestOrg) => {
  const dir = join(server.dataDir, "documents", org.orgId);
  return existsSync(dir) ? readdirSync(dir) : [];
};
const chunkCount = (documentId: string) =>
  server.deps.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM search_chunks WHERE document_id = ?").get(documentId)!.n;
const ledgerEntries = (org: TestOrg) =>
  server.deps.db
    .query<{ type: string; amount_pence: number; key: string }, [string]>("SELECT type, amount_pence, idempotency_key AS key FROM ledger_entries WHERE org_id = ? ORDER BY id")
    .all(org.orgId);
const search = (org: TestOrg, query: string) =>
  searchKnowledgeBase(server.deps, { orgId: org.orgId, query, jurisdictions: resolveJurisdictions(server.deps, org.orgId), topK: 5 });

describe("real PDFs", () => {
  test("each is charged for its exact pages, becomes ready, and its text is searchable by its organisation only", async () => {
    const owner = fundedOrg();
    const stranger = fundedOrg();
    const ids = new Map<string, string>();
    let expectedAvailable = available(owner);
    for (const pdf of REAL_PDFS) {
      const res = await upload(owner, await Bun.file(join(REAL_PDF_DIR, pdf.file)).bytes(), pdf.file);
      const price = Math.max(10, 2 * pdf.pages);
      expectedAvailable -= price;
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ id: expect.any(String), status: "processing", filename: pdf.file, pages: pdf.pages, creditsChargedPence: price, availablePence: expectedAvailable });
      ids.set(pdf.file, res.body.id);
    }
    for (const pdf of REAL_PDFS) {
      const doc = await settled(owner, ids.get(pdf.file)!);
      expect(doc).toMatchObject({ filename: pdf.file, status: "ready", pages: pdf.pages, jurisdictionSlugs: [], error: null });
      const matches = await search(owner, pdf.sentence);
      const hit = matches.find((m) => m.source === pdf.file && m.content.replace(/\s+/g, " ").includes(pdf.sentence));
      expect({ file: pdf.file, citationPath: hit?.citationPath }).toEqual({ file: pdf.file, citationPath: `${pdf.file}#page=${pdf.page}` });
      expect((await search(stranger, pdf.sentence)).some((m) => m.source === pdf.file)).toBe(false);
    }
    expect(available(owner)).toBe(expectedAvailable);
    expect(storedFiles(owner).sort()).toEqual([...ids.values()].map((id) => `${id}.pdf`).sort());
  }, 120_000);
});

/** Headings printed in the PDFs themselves, with the page each heads. */
const HEADING_QUERIES: { file: string; query: string; page: number }[] = [
  { file: "indiana_TITLE24_AR4.9.pdf", query: "Redacted data or personal information", page: 4 },
  { file: "indiana_TITLE24_AR4.9.pdf", query: "Notification of data base owner", page: 5 },
  { file: "indiana_TITLE24_AR4.9.pdf", query: "Method of disclosure; exceptions", page: 7 },
  { file: "indiana_TITLE24_AR4.9.pdf", query: "Failure to disclose or notify; deceptive act", page: 9 },
  { file: "utah_UT-13-44.pdf", query: "Personal information -- Disclosure of system security breach", page: 2 },
  { file: "wisconsin_134.pdf", query: "Notice of unauthorized acquisition of personal information", page: 25 },
  { file: "wisconsin_134.pdf", query: "Payment of commissions to independent sales representatives", page: 23 },
];

describe("real PDFs, searched by their own headings", () => {
  // A heading also names the body that runs onto the next page, so the page it is printed on
  // must be among the document's first two pages; most are first (docs/architecture.md, Chunking).
  test("the page a heading is printed on is among the document's first two matching pages", async () => {
    const org = fundedOrg();
    const ids = new Map<string, string>();
    for (const file of new Set(HEADING_QUERIES.map((q) => q.file))) {
      const res = await upload(org, await Bun.file(join(REAL_PDF_DIR, file)).bytes(), file);
      expect(res.status).toBe(202);
      ids.set(file, res.body.id);
    }
    for (const id of ids.values()) expect((await settled(org, id)).status).toBe("ready");
    let first = 0;
    for (const { file, query, page } of HEADING_QUERIES) {
      const pages = [...new Set((await search(org, query)).filter((m) => m.source === file).map((m) => m.citationPath))];
      expect({ query, pages: pages.slice(0, 2) }).toEqual({ query, pages: expect.arrayContaining([`${file}#page=${page}`]) });
      if (pages[0] === `${file}#page=${page}`) first++;
    }
    expect(first).toBeGreaterThanOrEqual(HEADING_QUERIES.length - 2);
  }, 120_000);
});

describe("rejected uploads: documented error, nothing charged, nothing stored", () => {
  const cases: Array<[string, () => Uint8Array, string, number, string]> = [
    ["truncated file", hostile.truncatedPdf, "truncated.pdf", 400, "invalid_pdf"],
    ["random bytes named .pdf", () => hostile.randomBytes(32 * 1024), "random.pdf", 400, "invalid_pdf"],
    ["encrypted PDF", () => hostile.encryptedPdf(""), "encrypted.pdf", 400, "invalid_pdf"],
    ["password-protected PDF", () => hostile.encryptedPdf("secret"), "locked.pdf", 400, "invalid_pdf"],
    ["zero pages", hostile.zeroPagePdf, "empty.pdf", 400, "invalid_pdf"],
    ["self-referencing object graph", hostile.selfReferencingPdf, "loop.pdf", 400, "invalid_pdf"],
    ["PDF inside a ZIP", () => hostile.pdfInsideZip(textPdf({ pageCount: 1 })), "policy.pdf", 400, "invalid_pdf"],
    ["empty file", () => new Uint8Array(0), "nothing.pdf", 400, "invalid_pdf"],
    ["501 pages", () => textPdf({ pageCount: 501 }), "long.pdf", 400, "too_many_pages"],
    ["10,000 pages", () => textPdf({ pageCount: 10_000 }), "huge.pdf", 400, "too_many_pages"],
    ["file over the byte limit", () => hostile.randomBytes(MAX_UPLOAD_BYTES + 1), "big.pdf", 413, "payload_too_large"],
  ];
  for (const [name, build, filename, status, code] of cases) {
    test(`${name} → ${status} ${code}`, async () => {
      const org = fundedOrg(5_000);
      const res = await upload(org, build(), filename);
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error: code, details: expect.any(String) });
      expect(available(org)).toBe(5_000);
      expect(storedFiles(org)).toEqual([]);
      expect((await server.api("/v1/documents", { key: org.key })).body).toEqual({ documents: [] });
    });
  }

  test("a body streamed without Content-Length is cut off at the limit → 413", async () => {
    const org = fundedOrg(5_000);
    const boundary = "regkb-boundary";
    const head = new TextEncoder().encode(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="x.pdf"\r\n\r\n`);
    let sentBytes = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sentBytes === 0) controller.enqueue(head);
        // Endless: only the server's byte cap can end this upload.
        controller.enqueue(new Uint8Array(64 * 1024));
        sentBytes += 64 * 1024;
        if (sentBytes > 8 * MAX_UPLOAD_BYTES) controller.close();
      },
    });
    const res = await fetch(`${server.url}/v1/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${org.key}`, "content-type": `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "payload_too_large", details: `the upload limit is ${MAX_UPLOAD_BYTES} bytes` });
    expect(sentBytes).toBeLessThan(4 * MAX_UPLOAD_BYTES);
    expect(available(org)).toBe(5_000);
  });

  test("no API key → 401 before the body is read", async () => {
    const res = await upload({ orgId: "", key: "rk_live_wrong" }, textPdf({ pageCount: 1 }));
    expect(res.status).toBe(401);
  });

  test("a JSON body → 415 unsupported_media_type", async () => {
    const org = fundedOrg();
    const res = await server.api("/v1/documents", { key: org.key, body: { file: "policy.pdf" } });
    expect(res.status).toBe(415);
    expect(res.body.error).toBe("unsupported_media_type");
  });

  test("no file part → 400 validation_failed naming body.file", async () => {
    const org = fundedOrg();
    const form = new FormData();
    form.append("jurisdictionSlugs", "[]");
    const res = await server.api("/v1/documents", { key: org.key, method: "POST", body: form });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "validation_failed", details: expect.stringContaining("body.file") });
  });

  test("jurisdictionSlugs: malformed JSON → validation_failed; a slug not enabled → invalid_jurisdictions", async () => {
    const org = fundedOrg(5_000, ["eu", "us"]);
    const pdf = textPdf({ pageCount: 1 });
    for (const [field, code] of [["[eu", "validation_failed"], ['{"eu":1}', "validation_failed"], ["[1,2]", "validation_failed"], ['["eu","us-ny"]', "invalid_jurisdictions"], ['["mars"]', "invalid_jurisdictions"]] as const) {
      const res = await upload(org, pdf, "policy.pdf", field);
      expect({ field, status: res.status, error: res.body.error }).toEqual({ field, status: 400, error: code });
    }
    expect(available(org)).toBe(5_000);
    expect(storedFiles(org)).toEqual([]);
  });

  test("too little credit → 402 with available and required; nothing stored", async () => {
    const org = fundedOrg(0);
    const res = await upload(org, textPdf({ pageCount: 7 }));
    expect(res.status).toBe(402);
    expect(res.body).toEqual({ error: "insufficient_credit", details: "available 0 pence, required 14 pence" });
    expect(storedFiles(org)).toEqual([]);
    expect((await server.api("/v1/documents", { key: org.key })).body.documents).toEqual([]);
  });
});

describe("idempotency", () => {
  test("a retry with the same Idempotency-Key and file replays the 202; another file under that key is 409", async () => {
    const org = fundedOrg(1_000);
    const pdf = textPdf({ pageCount: 6 });
    const first = await upload(org, pdf, "retry.pdf", undefined, { "idempotency-key": "upload-1" });
    const again = await upload(org, pdf, "retry.pdf", undefined, { "idempotency-key": "upload-1" });
    expect(first.status).toBe(202);
    expect(again).toMatchObject({ status: 202, body: first.body });
    expect(available(org)).toBe(988);
    const other = await upload(org, textPdf({ pageCount: 7 }), "retry.pdf", undefined, { "idempotency-key": "upload-1" });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe("idempotency_key_reused");
    expect(storedFiles(org)).toEqual([`${first.body.id}.pdf`]);
  });
});

describe("ingestion outcomes", () => {
  test("jurisdictionSlugs are kept; a one-page PDF costs the 10p minimum", async () => {
    const org = fundedOrg(1_000, ["eu", "us", "us-ny"]);
    const res = await upload(org, textPdf({ pages: [["Retention of CCTV footage is limited to thirty days."]] }), "cctv.pdf", '["us-ny","eu"]');
    expect(res.body).toMatchObject({ pages: 1, creditsChargedPence: 10, availablePence: 990 });
    const doc = await settled(org, res.body.id);
    expect(doc).toMatchObject({ status: "ready", jurisdictionSlugs: ["us-ny", "eu"] });
  });

  test("a page with a huge image is ingested for its text (the image is never decoded)", async () => {
    const org = fundedOrg();
    const res = await upload(org, hostile.hugeImagePdf("Badge access logs are reviewed every quarter by the facilities team."), "badges.pdf");
    expect(res.status).toBe(202);
    expect(await settled(org, res.body.id)).toMatchObject({ status: "ready", pages: 1 });
    expect((await search(org, "badge access logs reviewed every quarter")).some((m) => m.citationPath === "badges.pdf#page=1")).toBe(true);
  });

  test("a scanned PDF (no text layer) fails and its charge is refunded exactly once", async () => {
    const org = fundedOrg(1_000);
    const res = await upload(org, hostile.imageOnlyPdf(12), "scan.pdf");
    expect(res.body).toMatchObject({ status: "processing", pages: 12, creditsChargedPence: 24, availablePence: 976 });
    const doc = await settled(org, res.body.id);
    expect(doc).toMatchObject({ status: "failed", pages: 12, error: NO_TEXT_LAYER_MESSAGE });
    expect(available(org)).toBe(1_000);
    // Replaying the failure step (as a recovered run would) moves no more money.
    const row = findDocument(server.deps.db, res.body.id)!;
    const run = getRunById(server.deps.db, row.runId)!;
    server.deps.db.transaction(() => documentIngestSpec(server.deps).onFailed(server.deps.db, run as never, "replayed")).immediate();
    expect(available(org)).toBe(1_000);
    expect(ledgerEntries(org).filter((e) => e.type === "adjustment")).toEqual([{ type: "adjustment", amount_pence: 24, key: `refund:${res.body.id}` }]);
    expect(chunkCount(res.body.id)).toBe(0);
  });
});

describe("decompression bombs and who pays for a PDF that fails on its content", () => {
  test("a PDF whose content inflates to 1 GiB is charged, fails ingestion with a clear error, and is refunded", async () => {
    const org = fundedOrg(1_000);
    const res = await upload(org, hostile.contentBombPdf(1024), "bomb.pdf");
    expect(res.body).toMatchObject({ status: "processing", pages: 1, creditsChargedPence: 10 });
    const doc = await settled(org, res.body.id);
    expect(doc).toMatchObject({
      status: "failed",
      error: "the PDF could not be read: the PDF's compressed streams expand to more than 128 MiB (a decompression bomb?); the charge has been refunded",
    });
    expect(available(org)).toBe(1_000);
    expect(chunkCount(res.body.id)).toBe(0);
  }, 60_000);

  test("a bomb read while the pages are counted is a 400 invalid_pdf; nothing charged or stored", async () => {
    const org = fundedOrg(1_000);
    const res = await upload(org, hostile.metadataBombPdf(1024), "metadata-bomb.pdf");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "invalid_pdf", details: expect.stringContaining("expand to more than 128 MiB") });
    expect(available(org)).toBe(1_000);
    expect(storedFiles(org)).toEqual([]);
  }, 60_000);

  test("after REGKB_DOCUMENT_FAILURES_PER_HOUR failures an organisation's uploads get 429 with Retry-After; others are unaffected", async () => {
    const org = fundedOrg(1_000);
    // A scan parses fine (it has no text): it fails ingestion but does not count.
    expect((await settled(org, (await upload(org, hostile.imageOnlyPdf(1), "scan.pdf")).body.id)).status).toBe("failed");
    for (let failure = 0; failure < server.deps.config.documentFailuresPerHour; failure++) {
      expect((await upload(org, hostile.zeroPagePdf(), `empty-${failure}.pdf`)).status).toBe(400);
    }
    const limited = await upload(org, textPdf({ pageCount: 1 }), "fine.pdf");
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "rate_limited", details: expect.stringContaining("failed on their content in the last hour") });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(3_500);
    expect(available(org)).toBe(1_000);
    const other = fundedOrg(1_000);
    expect((await upload(other, textPdf({ pageCount: 1 }), "fine.pdf")).status).toBe(202);
  }, 60_000);
});

describe("reading and deleting", () => {
  test("list is the organisation's own, newest first; read and delete answer 404 for others and for bad ids", async () => {
    const org = fundedOrg();
    const other = fundedOrg();
    const first = (await upload(org, textPdf({ pages: [["Visitors sign the register at reception."]] }), "first.pdf")).body.id;
    const second = (await upload(org, textPdf({ pages: [["Laptops are encrypted before issue."]] }), "second.pdf")).body.id;
    await upload(other, textPdf({ pageCount: 1 }), "theirs.pdf");
    const list = await server.api("/v1/documents", { key: org.key });
    expect(list.body.documents.map((d: { id: string }) => d.id)).toEqual([second, first]);
    expect(list.body.documents[0]).toEqual({
      id: second,
      filename: "second.pdf",
      status: expect.stringMatching(/^(processing|ready)$/),
      jurisdictionSlugs: [],
      pages: 1,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      error: null,
    });
    for (const path of [`/v1/documents/${first}`, "/v1/documents/not-a-uuid", `/v1/documents/${Bun.randomUUIDv7()}`]) {
      const key = path.endsWith(first) ? other.key : org.key;
      expect((await server.api(path, { key })).status).toBe(404);
      expect((await server.api(path, { key, method: "DELETE" })).body).toEqual({ error: "not_found", details: expect.any(String) });
    }
    expect((await server.api(`/v1/documents/${first}`, { key: org.key })).status).toBe(200);
  });

  test("delete removes passages, row and file; refunds nothing; a second delete is 404", async () => {
    const org = fundedOrg(1_000);
    const sentence = "Printed payslips are collected in person from the payroll office.";
    const id = (await upload(org, textPdf({ pages: [["Intro page."], [sentence]] }), "payroll.pdf")).body.id;
    expect((await settled(org, id)).status).toBe("ready");
    expect(chunkCount(id)).toBe(2);
    expect((await search(org, sentence)).some((m) => m.source === "payroll.pdf")).toBe(true);

    const res = await server.api(`/v1/documents/${id}`, { key: org.key, method: "DELETE" });
    expect(res).toMatchObject({ status: 200, body: { deleted: true, id } });
    expect(chunkCount(id)).toBe(0);
    expect((await search(org, sentence)).some((m) => m.source === "payroll.pdf")).toBe(false);
    expect(storedFiles(org)).toEqual([]);
    expect((await server.api(`/v1/documents/${id}`, { key: org.key })).status).toBe(404);
    expect((await server.api(`/v1/documents/${id}`, { key: org.key, method: "DELETE" })).status).toBe(404);
    expect(available(org)).toBe(990);
  });

  test("deleting during ingestion stops it and leaves nothing behind, with no refund", async () => {
    const org = fundedOrg(5_000);
    const res = await upload(org, policyPdf(400, 60), "handbook.pdf");
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const runId = findDocument(server.deps.db, id)!.runId;
    const deadline = Date.now() + 10_000;
    while (getRunById(server.deps.db, runId)!.status === "pending" && Date.now() < deadline) await Bun.sleep(5);
    expect(getRunById(server.deps.db, runId)!.status).toBe("running");

    expect((await server.api(`/v1/documents/${id}`, { key: org.key, method: "DELETE" })).status).toBe(200);
    while (["pending", "running"].includes(getRunById(server.deps.db, runId)!.status) && Date.now() < deadline + 20_000) await Bun.sleep(20);
    expect(getRunById(server.deps.db, runId)!.status).toBe("completed");
    expect(getRunById(server.deps.db, runId)!.output).toEqual({ deleted: true, chunks: 0 });
    await Bun.sleep(300);
    expect(chunkCount(id)).toBe(0);
    expect(storedFiles(org)).toEqual([]);
    expect(findDocument(server.deps.db, id)).toBeNull();
    expect(available(org)).toBe(5_000 - 800);
    expect(ledgerEntries(org).some((e) => e.type === "adjustment")).toBe(false);
  }, 60_000);
});

test("the OpenAPI document describes the multipart upload and the document routes", async () => {
  const doc = (await server.api("/v1/openapi.json")).body;
  const post = doc.paths["/v1/documents"].post;
  expect(post.requestBody.content["multipart/form-data"].schema).toEqual({ $ref: "#/components/schemas/DocumentUpload" });
  expect(doc.components.schemas.DocumentUpload.required).toEqual(["file"]);
  expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["202", "400", "401", "402", "413", "415"]));
  expect(doc.paths["/v1/documents/{id}"].delete).toBeDefined();
});
