import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createApiKey } from "../../src/auth/service";
import { listApiKeys } from "../../src/auth/store";
import { topUp } from "../../src/billing/ledger";
import { ledgerKeys } from "../../src/billing/ledger-keys";
import { poundsToPence } from "../../src/dashboard/pages/top-up";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import { DashboardClient, signedInUser } from "./client";

let server: TestServer;
let acme: TestOrg;
let globex: TestOrg;
let client: DashboardClient;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  acme = server.createOrg({ name: "Acme" });
  globex = server.createOrg({ name: "Globex" });
  ({ client } = await signedInUser(server, acme.orgId, "pages@acme.example"));
});
afterAll(() => server.stop());

describe("pages", () => {
  test("every page is self-contained: security headers, and no asset from another host", async () => {
    for (const path of ["/", "/ledger", "/top-up", "/keys", "/documents", "/search", "/jurisdictions", "/password", "/login"]) {
      const page = await client.text(path);
      expect(page.status).toBe(path === "/login" ? 303 : 200);
      if (page.status !== 200) continue;
      expect(page.response.headers.get("content-security-policy")).toContain("default-src 'none'");
      expect(page.response.headers.get("cache-control")).toBe("no-store");
      const references = [...page.text.matchAll(/(?:src|href|action)="([^"]*)"/g)].map((m) => m[1]!);
      expect(references.filter((r) => !r.startsWith("/") && !r.startsWith("#"))).toEqual([]);
    }
    const css = /href="(\/assets\/app\.[0-9a-f]+\.css)"/.exec((await client.text("/")).text)![1]!;
    const asset = await fetch(server.url + css);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect(await asset.text()).not.toMatch(/url\(|@import/);
  });

  test("without a payment provider the top-up page says so and the form post is refused with 503", async () => {
    const page = await client.text("/top-up");
    expect(page.text).toContain('data-payments="not-configured"');
    const res = await client.request("/top-up", { form: { _csrf: await client.csrf(), preset: "25" } });
    expect(res.status).toBe(503);
    expect(await res.text()).toContain("Payments are not configured");
  });

  test("top-up amounts are read in pounds exactly", () => {
    expect(poundsToPence("25")).toBe(2500);
    expect(poundsToPence("£40.5")).toBe(4050);
    expect(poundsToPence("1,000.00")).toBe(100000);
    expect(poundsToPence("0.1.2")).toBeNull();
    expect(poundsToPence("-5")).toBeNull();
    expect(poundsToPence("10.999")).toBeNull();
  });

  test("a search from the playground is charged exactly like POST /v1/search, and refused with 402 at no cost when credit is short", async () => {
    const short = await client.request("/search", { form: { _csrf: await client.csrf(), query: "breach notification", jurisdiction: "eu", topK: "5" } });
    expect(short.status).toBe(402);
    expect(await short.text()).toContain("Not enough credit");
    expect((await server.api("/v1/credits/ledger", { key: acme.key })).body.entries).toEqual([]);

    topUp(server.deps.db, { orgId: acme.orgId, amountPence: 1000, key: ledgerKeys.operatorTopUp(acme.orgId, "pages"), description: "test credit", nowMs: Date.now() });
    const ok = await client.request("/search", { form: { _csrf: await client.csrf(), query: "breach notification", jurisdiction: "eu", topK: "5" } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain("Charged £0.02");
    await server.api("/v1/search", { key: acme.key, body: { query: "breach notification", jurisdictions: ["eu"], topK: 5 } });
    const [api, dashboard] = (await server.api("/v1/credits/ledger", { key: acme.key })).body.entries;
    expect({ ...dashboard, id: 0, createdAt: 0 }).toEqual({ ...api, id: 0, createdAt: 0 });
    expect(api.amountPence).toBe(-2);
  });

  test("an upload that is not a PDF is refused with the API's reason and nothing is charged", async () => {
    const form = new FormData();
    form.append("_csrf", await client.csrf());
    form.append("file", new File(["just text"], "notes.pdf", { type: "application/pdf" }));
    const before = (await server.api("/v1/credits", { key: acme.key })).body;
    const res = await client.request("/documents", { form });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("That file is not a usable PDF");
    expect((await server.api("/v1/credits", { key: acme.key })).body).toEqual(before);
  });

  test("another organisation's key cannot be revoked from this dashboard", async () => {
    const other = createApiKey(server.deps, { orgId: globex.orgId, name: "theirs" });
    const csrf = await client.csrf();
    expect((await client.request(`/keys/${other.id}/revoke`)).headers.get("location")).toBe("/keys");
    expect((await client.request(`/keys/${other.id}/revoke`, { form: { _csrf: csrf } })).headers.get("location")).toBe("/keys");
    expect(listApiKeys(server.deps.db, globex.orgId).find((k) => k.id === other.id)!.revokedAtMs).toBeNull();
    expect((await server.api("/v1/credits", { key: other.key })).status).toBe(200);
  });
});
