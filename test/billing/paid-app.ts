// A minimal paid route, mounted only by the billing tests, the two-process child and the
// ledger benchmark: it charges like POST /v1/search (2p, key derived from the operation id)
// without the search work, so what is measured is authentication, idempotency and the ledger.
import { Elysia, t } from "elysia";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { buildApp } from "../../src/app";
import { charge, getBalance } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { searchPence } from "../../src/billing/pricing";
import type { Clock } from "../../src/clock";
import { loadConfig, type Env } from "../../src/config";
import { createDeps, type Deps } from "../../src/deps";
import { requireApiKey } from "../../src/http/auth";
import { idempotency, type IdempotencyOptions } from "../../src/http/idempotency";
import { observe } from "../../src/http/observe";

export interface PaidRouteOptions {
  /** Exit the process right after the charge commits (a crash before the response is stored). */
  crashAfterCharge?: boolean;
  idempotency?: IdempotencyOptions;
}

export function paidRoutes(deps: Deps, options: PaidRouteOptions = {}) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .use(idempotency(deps, options.idempotency))
    .post(
      "/test-paid",
      async ({ auth, body, operationId }) => {
        const entry = charge(deps.db, {
          orgId: auth.orgId,
          amountPence: searchPence,
          key: ledgerKeys.search(operationId),
          description: "Test paid request",
          ref: operationId,
          nowMs: deps.clock.nowMs(),
        });
        if (options.crashAfterCharge) process.exit(70);
        if (body.delayMs) await Bun.sleep(body.delayMs);
        return {
          requestId: operationId,
          entryId: entry.id,
          creditsChargedPence: searchPence,
          availablePence: getBalance(deps.db, auth.orgId).availablePence,
        };
      },
      { body: t.Object({ query: t.String({ maxLength: 1000 }), delayMs: t.Optional(t.Integer({ minimum: 0, maximum: 10_000 })) }) },
    );
}

export interface PaidServer {
  url: string;
  deps: Deps;
  stop(): Promise<void>;
}

/** The whole application plus the paid route, on a real port over the data directory's database. */
export async function startPaidServer(
  dataDir: string,
  options: PaidRouteOptions & { clock?: Clock; env?: Env } = {},
): Promise<PaidServer> {
  const config = loadConfig({ REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0", ...options.env }, { dataDir, port: 0, host: "127.0.0.1" });
  const deps = await createDeps(config, { clock: options.clock });
  const app = buildApp(deps).use(paidRoutes(deps, options));
  const handle = observe(deps, (request) => app.handle(request));
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request, s) => handle(request, s) });
  return {
    url: `http://127.0.0.1:${server.port}`,
    deps,
    async stop() {
      await server.stop(true);
      deps.db.close();
    },
  };
}

export function createPaidOrg(deps: Deps, balancePence: number, name = "Paid org"): { orgId: string; key: string } {
  const org = createOrganisation(deps, { name, jurisdictions: [] });
  if (balancePence > 0) recordOperatorTopUp(deps, { orgId: org.id, amountPence: balancePence, reference: "initial" });
  return { orgId: org.id, key: createApiKey(deps, { orgId: org.id }).key };
}

export async function postPaid(
  url: string,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; text: string; headers: Headers }> {
  const response = await fetch(`${url}/v1/test-paid`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // keep the text
  }
  return { status: response.status, body: parsed, text, headers: response.headers };
}
