// The shipped TypeScript client (clients/typescript): its types are what an independent
// generator makes of the served document, customer code compiles against them under
// `tsc --strict`, and that code runs against a real server on a real port.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { customerScenario } from "../../clients/typescript/examples/scenario";
import { CLIENT_SCHEMA_FILE, generateClientTypes } from "../../scripts/generate-client";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { TEST_SANDBOX_CACHE_DIR } from "../executions/pool-helper";
import { textPdf } from "../fixtures/pdf/writer";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";

const CLIENT_DIR = join(import.meta.dir, "..", "..", "clients", "typescript");
let server: TestServer;

beforeAll(async () => {
  // Reuse the Pyodide files and memory snapshot the sandbox tests made.
  const dataDir = tempDir();
  mkdirSync(TEST_SANDBOX_CACHE_DIR, { recursive: true });
  symlinkSync(TEST_SANDBOX_CACHE_DIR, join(dataDir, "cache"));
  server = await startTestServer({ dataDir, env: { REGKB_SANDBOX_POOL_SIZE: "1" } });
  await importSampleCorpus(server.deps);
}, 120_000);
afterAll(() => server.stop());

describe("clients/typescript", () => {
  test("schema.d.ts is what openapi-typescript generates from the served document", async () => {
    const served = await fetch(`${server.url}/v1/openapi.json`).then((r) => r.text());
    const generated = generateClientTypes(served);
    expect(generated).toContain("export interface components");
    // A stale file fails here: run `bun scripts/generate-client.ts` and commit the result.
    expect(readFileSync(CLIENT_SCHEMA_FILE, "utf8")).toBe(generated);
  }, 60_000);

  test("the client, its README example and the customer scenario compile under tsc --strict", () => {
    const readme = readFileSync(join(CLIENT_DIR, "README.md"), "utf8");
    const example = /```ts\n([\s\S]*?)```/.exec(readme)![1]!;
    expect(readFileSync(join(CLIENT_DIR, "examples", "readme.ts"), "utf8")).toBe(example);
    const tsc = Bun.spawnSync(["node", join(CLIENT_DIR, "node_modules", "typescript", "bin", "tsc"), "--strict", "--noEmit", "-p", CLIENT_DIR], {
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(`${tsc.stdout}${tsc.stderr}`).toBe("");
    expect(tsc.exitCode).toBe(0);
  }, 60_000);

  test("the customer scenario runs against a real server", async () => {
    const org = server.createOrg({ jurisdictions: ["eu", "us"], balancePence: 1_000 });
    const broke = server.createOrg({ jurisdictions: ["eu"] });
    const pdf = textPdf({ pages: [["Breach procedure", "The privacy office notifies the supervisory authority within 72 hours."], ["Records", "Every breach is recorded."]] });
    const report = await customerScenario({ baseUrl: server.url, apiKey: org.key, brokeApiKey: broke.key, pdf: new Uint8Array(pdf) });

    expect(report.jurisdictions).toEqual(["eu", "us"]);
    expect(report.topMatch?.citationPath).toStartWith("GDPR > Article 33");
    expect(report.availableAfterSearchPence).toBe(998);
    expect(report.screening).toEqual({ status: "completed", keywords: ["breach notification", "data protection officer"], matchesPerKeyword: [2, 2] });
    expect(report.document).toEqual({
      id: expect.any(String),
      pages: 2,
      chargedPence: 10,
      readBackFilename: "breach-policy.pdf",
      deleted: true,
      afterDelete: "not_found",
    });
    expect(report.execution).toEqual({ status: "completed", exitCode: 124, stdout: "start\n", estimatedCostPence: 6 });
    // Newest first, two to a page, no entry twice: search, screening hold/settle/release,
    // the document's charge, the execution's hold/settle/release, the initial top-up.
    const entries = report.ledgerPages.flat();
    expect(report.ledgerPages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
    expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
    expect(entries.length).toBe(9);
    expect(entries.at(-1)).toMatchObject({ type: "top_up", amountPence: 1_000 });
    expect(entries.reduce((sum, e) => sum + e.amountPence, 0)).toBe(1_000 - 2 - 4 - 10 - 6);
    expect(report.refusedSearch).toEqual({ status: 402, error: "insufficient_credit", details: "available 0 pence, required 2 pence" });
    expect(report.missingExecution).toEqual({ status: 404, error: "not_found" });
  }, 120_000);
});
