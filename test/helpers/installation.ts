// A single-node installation built through the real services, for the tests that copy one
// into PostgreSQL and back: the sample corpus, an organisation with a key, a top-up,
// charged searches, screenings, an ingested and a deleted PDF, a dashboard user (a failed
// and a good sign-in), and a second, idle organisation. Also how those tests compare rows
// whichever engine returned them.
import { expect } from "bun:test";
import type { SQL } from "bun";
import { join } from "node:path";
import { createUser } from "../../src/dashboard/users";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { DashboardClient } from "../dashboard/client";
import { REAL_PDF_DIR, REAL_PDFS } from "../documents/real-pdfs";
import { waitForStatus } from "../screenings/fixtures";
import { runBinary } from "./binary";
import { startTestServer, type TestOrg, type TestServer } from "./server";

export const KEPT_PDF = REAL_PDFS.find((p) => p.file === "iowa_715c.pdf")!;
export const DELETED_PDF = REAL_PDFS.find((p) => p.file === "kentucky_KRS_365.720.pdf")!;

/** Uploads a real PDF from the shared corpus and waits until its ingestion has finished (ready). */
export async function uploadPdf(server: TestServer, org: TestOrg, file: string): Promise<string> {
  const form = new FormData();
  form.append("file", new File([await Bun.file(join(REAL_PDF_DIR, file)).bytes()], file, { type: "application/pdf" }));
  const res = await server.api("/v1/documents", { key: org.key, method: "POST", body: form });
  expect(res.status).toBe(202);
  const deadline = Date.now() + 30_000;
  while ((await server.api(`/v1/documents/${res.body.id}`, { key: org.key })).body.document.status === "processing") {
    if (Date.now() > deadline) throw new Error(`${file} still processing`);
    await Bun.sleep(25);
  }
  expect((await server.api(`/v1/documents/${res.body.id}`, { key: org.key })).body.document.status).toBe("ready");
  return res.body.id;
}

/** The installation in `dataDir`, built and then stopped; returns its active organisation. */
export async function buildInstallation(dataDir: string): Promise<TestOrg> {
  const server = await startTestServer({ dataDir });
  try {
    await importSampleCorpus(server.deps);
    const org = server.createOrg({ balancePence: 5_000 });
    server.createOrg({ name: "Idle Ltd" });
    expect(runBinary(["credits", "top-up", "--data-dir", dataDir, "--org", org.orgId, "--amount-pence", "700", "--reference", "wire-1"]).exitCode).toBe(0);
    for (const query of ["notify the supervisory authority of a personal data breach", "right to erasure"]) {
      const res = await server.api("/v1/search", { key: org.key, body: { query }, headers: { "idempotency-key": `search-${query.length}` } });
      expect(res.status).toBe(200);
    }
    for (const keywords of [["data breach notification"], ["consent", "erasure"]]) {
      const created = await server.api("/v1/screenings", { key: org.key, body: { keywords } });
      expect(created.status).toBe(202);
      await waitForStatus(server, org.key, created.body.id, ["completed"], 30_000);
    }
    await uploadPdf(server, org, KEPT_PDF.file);
    const deleted = await uploadPdf(server, org, DELETED_PDF.file);
    expect((await server.api(`/v1/documents/${deleted}`, { key: org.key, method: "DELETE" })).status).toBeLessThan(300);
    const user = await createUser(server.deps, { orgId: org.orgId, email: "analyst@example.com" });
    const browser = new DashboardClient(server.url);
    await browser.signIn(user.email, "not the password");
    await browser.signIn(user.email, user.oneTimePassword);
    return org;
  } finally {
    await server.stop();
  }
}

/** A value as text whichever engine returned it (PostgreSQL's BIGINT is a string, bytes are a Buffer). */
function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString("hex")}`;
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  return value;
}

export function normaliseRows(rows: Record<string, unknown>[]): string[] {
  return rows.map((row) => JSON.stringify(Object.entries(row).map(([k, v]) => [k, normalise(v)]))).sort();
}

export async function postgresRows(sql: SQL, table: string, columns: string[]): Promise<string[]> {
  return normaliseRows(await sql.unsafe(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"`));
}

/** The columns of a copied table that both engines hold (PostgreSQL's table less its own, such as ledger_entries.seq). */
export async function columnsOf(sql: SQL, plan: { table: string; postgresOnly?: string[] }): Promise<string[]> {
  const rows: { name: string }[] = await sql`SELECT column_name AS name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${plan.table} ORDER BY ordinal_position`;
  return rows.map((r) => r.name).filter((name) => !plan.postgresOnly?.includes(name));
}
