/**
 * A customer's day with the API, written as customer code: it must compile under
 * `tsc --strict` against the generated types, and test/clients/typescript.test.ts runs it
 * against a real server.
 */
import { createRegkbClient, uploadDocument, type ErrorCode, type LedgerEntry, type SearchMatch } from "../src/index";

export interface ScenarioInput {
  baseUrl: string;
  apiKey: string;
  /** A key of an organisation with no credit: its search must be refused with 402. */
  brokeApiKey: string;
  pdf: Uint8Array<ArrayBuffer>;
}

export interface ScenarioReport {
  jurisdictions: string[];
  topMatch: SearchMatch | undefined;
  availableAfterSearchPence: number;
  screening: { status: string; keywords: string[]; matchesPerKeyword: number[] };
  document: { id: string; pages: number; chargedPence: number; readBackFilename: string; deleted: boolean; afterDelete: ErrorCode | undefined };
  execution: { status: string; exitCode: number | null; stdout: string | null; estimatedCostPence: number };
  ledgerPages: LedgerEntry[][];
  refusedSearch: { status: number; error: ErrorCode | undefined; details: string | undefined };
  missingExecution: { status: number; error: ErrorCode | undefined };
}

const POLL_MS = 100;
const POLL_LIMIT_MS = 60_000;

async function poll<T extends { status: string }>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + POLL_LIMIT_MS;
  for (;;) {
    const run = await read();
    if (run.status === "completed" || run.status === "failed" || Date.now() > deadline) return run;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

export async function customerScenario(input: ScenarioInput): Promise<ScenarioReport> {
  const regkb = createRegkbClient({ baseUrl: input.baseUrl, apiKey: input.apiKey });

  const listed = await regkb.GET("/v1/jurisdictions");
  if (!listed.data) throw new Error(`jurisdictions: ${listed.error?.error}`);
  const jurisdictions = listed.data.jurisdictions.map((j) => j.slug);

  const search = await regkb.POST("/v1/search", {
    body: { query: "Article 33: notifying the supervisory authority of a personal data breach", topK: 3, jurisdictions: ["eu"] },
    params: { header: { "Idempotency-Key": `search-${Date.now()}` } },
  });
  if (!search.data) throw new Error(`search: ${search.error?.error}`);
  const availableAfterSearchPence: number = search.data.availablePence;
  const topMatch = search.data.results[0];

  const started = await regkb.POST("/v1/screenings", { body: { keywords: ["breach notification", "data protection officer"], topK: 2 } });
  if (!started.data) throw new Error(`screening: ${started.error?.error}`);
  const screeningId = started.data.id;
  const screening = await poll(async () => {
    const { data, error } = await regkb.GET("/v1/screenings/{id}", { params: { path: { id: screeningId } } });
    if (!data) throw new Error(`screening ${screeningId}: ${error?.error}`);
    return data;
  });

  const uploaded = await uploadDocument(regkb, { file: new Blob([input.pdf], { type: "application/pdf" }), filename: "breach-policy.pdf", jurisdictionSlugs: ["eu"] });
  if (!uploaded.data) throw new Error(`upload: ${uploaded.error?.error} ${uploaded.error?.details}`);
  const documentId = uploaded.data.id;
  const readBack = await regkb.GET("/v1/documents/{id}", { params: { path: { id: documentId } } });
  const deleted = await regkb.DELETE("/v1/documents/{id}", { params: { path: { id: documentId } } });
  const afterDelete = await regkb.GET("/v1/documents/{id}", { params: { path: { id: documentId } } });

  const created = await regkb.POST("/v1/executions", { body: { code: "import time\nprint('start', flush=True)\ntime.sleep(30)", timeoutSeconds: 1 } });
  if (!created.data) throw new Error(`execution: ${created.error?.error} ${created.error?.details}`);
  const executionId = created.data.id;
  const execution = await poll(async () => {
    const { data, error } = await regkb.GET("/v1/executions/{id}", { params: { path: { id: executionId } } });
    if (!data) throw new Error(`execution ${executionId}: ${error?.error}`);
    return data;
  });

  const ledgerPages: LedgerEntry[][] = [];
  for (let offset = 0; ledgerPages.length < 10; offset += 2) {
    const page = await regkb.GET("/v1/credits/ledger", { params: { query: { limit: 2, offset } } });
    if (!page.data) throw new Error(`ledger: ${page.error?.error}`);
    if (page.data.entries.length === 0) break;
    ledgerPages.push(page.data.entries);
  }

  const broke = createRegkbClient({ baseUrl: input.baseUrl, apiKey: input.brokeApiKey });
  const refused = await broke.POST("/v1/search", { body: { query: "breach" } });
  const missing = await regkb.GET("/v1/executions/{id}", { params: { path: { id: "0190f5e2-7b1c-7c3a-9d2e-4f6a8b0c1d2e" } } });

  return {
    jurisdictions,
    topMatch,
    availableAfterSearchPence,
    screening: {
      status: screening.status,
      keywords: screening.keywords,
      matchesPerKeyword: (screening.results ?? []).map((r) => r.matches.length),
    },
    document: {
      id: documentId,
      pages: uploaded.data.pages,
      chargedPence: uploaded.data.creditsChargedPence,
      readBackFilename: readBack.data?.document.filename ?? "",
      deleted: deleted.data?.deleted ?? false,
      afterDelete: afterDelete.error?.error,
    },
    execution: { status: execution.status, exitCode: execution.exitCode, stdout: execution.stdout, estimatedCostPence: created.data.estimatedCostPence },
    ledgerPages,
    refusedSearch: { status: refused.response.status, error: refused.error?.error, details: refused.error?.details },
    missingExecution: { status: missing.response.status, error: missing.error?.error },
  };
}
