import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { upsertJurisdiction, type Jurisdiction } from "../../src/auth/store";
import { backgroundServices } from "../../src/background";
import { recordOperatorTopUp } from "../../src/billing/operator";
import type { Clock } from "../../src/clock";
import { loadConfig, type Env } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { maintainSearchIndex } from "../../src/search/maintenance";
import { startServer } from "../../src/server";

export const TEST_JURISDICTIONS: Jurisdiction[] = [
  { slug: "eu", name: "European Union", description: "EU regulations" },
  { slug: "us", name: "United States (federal)", description: "US federal regulations" },
  { slug: "us-ny", name: "New York", description: "New York State law" },
  { slug: "us-ca", name: "California", description: "California law" },
];

export interface TestOrg {
  orgId: string;
  key: string;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface TestServer {
  url: string;
  deps: Deps;
  dataDir: string;
  createOrg(options?: { name?: string; jurisdictions?: string[]; monthlyAllowancePence?: number; balancePence?: number }): TestOrg;
  api<T = any>(path: string, options?: { key?: string; method?: string; body?: unknown; headers?: Record<string, string> }): Promise<ApiResponse<T>>;
  stop(): Promise<void>;
}

export function tempDir(prefix = "regkb-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A real server on a random port over a real SQLite file in a fresh temporary folder.
 * `background: false` leaves run workers and ticks off, for tests that drive them.
 */
export async function startTestServer(
  options: { env?: Env; clock?: Clock; background?: boolean; dataDir?: string; jurisdictions?: Jurisdiction[] } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDir();
  // init: a test server's database is new on purpose, even beside a shared, pre-filled cache/.
  const config = loadConfig({ REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0", REGKB_PDF_PARSERS_WARM: "0", ...options.env }, { dataDir, port: 0, host: "127.0.0.1", init: true });
  const deps = await createDeps(config, { clock: options.clock });
  // As `regkb serve` does before it listens.
  await maintainSearchIndex(deps);
  for (const j of options.jurisdictions ?? TEST_JURISDICTIONS) upsertJurisdiction(deps.db, j);
  const server = await startServer(deps, {
    host: "127.0.0.1",
    port: 0,
    background: options.background === false ? [] : backgroundServices(deps),
  });
  let orgCount = 0;
  return {
    url: server.url,
    deps,
    dataDir,
    createOrg(o = {}) {
      const org = createOrganisation(deps, {
        name: o.name ?? `Org ${++orgCount}`,
        jurisdictions: o.jurisdictions ?? ["eu", "us", "us-ny"],
        monthlyAllowancePence: o.monthlyAllowancePence,
      });
      if (o.balancePence) recordOperatorTopUp(deps, { orgId: org.id, amountPence: o.balancePence, reference: "test-initial-credit" });
      return { orgId: org.id, key: createApiKey(deps, { orgId: org.id }).key };
    },
    async api(path, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key) headers.authorization = `Bearer ${o.key}`;
      let body: BodyInit | undefined;
      if (o.body instanceof FormData) body = o.body;
      else if (o.body !== undefined) {
        headers["content-type"] ??= "application/json";
        body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      }
      const response = await fetch(`${server.url}${path}`, { method: o.method ?? (body ? "POST" : "GET"), headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Non-JSON bodies (metrics, pages) are returned as text.
      }
      return { status: response.status, body: parsed as any, headers: response.headers };
    },
    async stop() {
      await server.stop();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
