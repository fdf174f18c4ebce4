// The dashboard in a real browser (Debian chromium via playwright-core), end to end against a
// real server, a real database and a local fake of Stripe driven by the real stripe SDK.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createUser } from "../../src/dashboard/users";
import { startFakeStripe, type FakeStripe } from "../helpers/fake-stripe";
import { startTestServer, type TestOrg, type TestServer } from "../helpers/server";
import { openBrowser, snap, type Browser, type PageAudit } from "./browser";

const PDF_NAME = "kentucky_KRS_365.725.pdf";
const PDF_PATH = join(import.meta.dir, "..", "..", "..", "shared", "corpus", "pdfs-real", PDF_NAME);
const WEBHOOK_SECRET = "whsec_dashboard_e2e";
const PASSWORD = "a sentence nobody else would choose";
const STEP_TIMEOUT_MS = 90_000;

let stripe: FakeStripe;
let server: TestServer;
let org: TestOrg;
let browser: Browser;
let oneTimePassword: string;
let apiKey: string;
const audits: Record<string, { desktop: PageAudit; phone: PageAudit }> = {};

async function capture(name: string): Promise<void> {
  audits[name] = await snap(browser.page, name);
}

beforeAll(async () => {
  stripe = startFakeStripe();
  server = await startTestServer({
    env: { REGKB_STRIPE_SECRET_KEY: "sk_test_dashboard", REGKB_STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET, REGKB_STRIPE_API_BASE: stripe.url },
  });
  // The port is only known once listening; checkout return URLs and the Origin check use publicUrl.
  server.deps.config.publicUrl = server.url;
  stripe.setWebhookTarget(`${server.url}/v1/webhooks/stripe`, WEBHOOK_SECRET);
  org = server.createOrg({ name: "Acme Compliance Ltd", jurisdictions: ["eu", "us", "us-ny"] });
  oneTimePassword = (await createUser(server.deps, { orgId: org.orgId, email: "dana@acme.example" })).oneTimePassword;
  browser = await openBrowser();
}, STEP_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  stripe?.stop();
});

test("sign in with the one-time password, then choose a password", async () => {
  const { page } = browser;
  await page.goto(`${server.url}/`);
  expect(new URL(page.url()).pathname).toBe("/login");
  await capture("login");
  await page.getByLabel("Email").fill("dana@acme.example");
  await page.getByLabel("Password").fill("wrong password entirely");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "do not match" }).waitFor();
  await capture("login-failed");
  await page.getByLabel("Password").fill(oneTimePassword);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/password$/);
  await capture("password-choose");
  await page.getByLabel("One-time password").fill(oneTimePassword);
  await page.getByLabel("New password", { exact: true }).fill(PASSWORD);
  await page.getByLabel("New password again").fill(PASSWORD);
  await page.getByRole("button", { name: "Save password" }).click();
  await page.waitForURL(/\/\?welcome=1$/);
  expect(await page.getByRole("heading", { level: 1 }).textContent()).toBe("Overview");
  await capture("overview-empty");
}, STEP_TIMEOUT_MS);

test("top up through the hosted checkout; the signed webhook credits the balance", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "Top up", exact: true }).click();
  await capture("top-up");
  await page.getByRole("button", { name: "£25" }).click();
  await page.waitForURL(new RegExp(`^${stripe.url}/checkout/`));
  expect(stripe.requests).toContain("POST /v1/checkout/sessions");
  await capture("fake-stripe-checkout");
  await page.getByRole("button", { name: /^Pay/ }).click();
  await page.waitForURL(/\/top-up\?order=.*&outcome=success$/);
  // The page shows "waiting" or "paid" depending on whether the webhook won the race; it updates itself.
  await page.locator('[data-outcome="paid"]', { hasText: "£25.00 added" }).waitFor({ timeout: 15_000 });
  await capture("top-up-success");

  // A second checkout, abandoned: the cancel page says nothing was charged.
  await page.getByLabel("Or another amount in pounds").fill("40");
  await page.getByRole("button", { name: "Continue to payment" }).click();
  await page.waitForURL(new RegExp(`^${stripe.url}/checkout/`));
  await page.getByRole("link", { name: "Cancel and return" }).click();
  await page.waitForURL(/outcome=cancelled$/);
  await page.locator('[data-outcome="cancelled"]').waitFor();
  await capture("top-up-cancelled");

  const credits = await server.api("/v1/credits", { key: org.key });
  expect(credits.body).toEqual({ balancePence: 2500, heldPence: 0, availablePence: 2500, currency: "GBP" });
}, STEP_TIMEOUT_MS);

test("create an API key, see it once, copy it, and use it against the API", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "API keys" }).click();
  await page.getByLabel("Name").fill("Production server");
  await page.getByRole("button", { name: "Create key" }).click();
  const shown = page.locator("#new-key");
  apiKey = (await shown.textContent())!.trim();
  expect(apiKey).toMatch(/^rk_live_[0-9A-Za-z]{40}$/);
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await page.getByRole("button", { name: "Copy" }).click();
  await page.getByRole("button", { name: "Copied" }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
  await capture("keys-created");

  const res = await server.api("/v1/credits", { key: apiKey });
  expect(res.status).toBe(200);
  expect(res.body.availablePence).toBe(2500);
  await page.reload();
  expect(await page.locator("#new-key").count()).toBe(0);
  expect(await page.locator("body").textContent()).not.toContain(apiKey);
  expect(await page.locator("tr", { hasText: "Production server" }).textContent()).not.toContain("Never");
  await capture("keys");
}, STEP_TIMEOUT_MS);

test("upload a real PDF and watch it become ready without reloading", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "Documents" }).click();
  await page.getByLabel("PDF file").setInputFiles({ name: PDF_NAME, mimeType: "application/pdf", buffer: readFileSync(PDF_PATH) });
  await page.getByLabel("New York").check();
  await page.getByRole("button", { name: "Upload" }).click();
  await page.waitForURL(/\/documents\?uploaded=/);
  await page.getByRole("status").filter({ hasText: `“${PDF_NAME}” uploaded` }).waitFor();
  const row = page.locator("tr", { hasText: PDF_NAME });
  if ((await row.getAttribute("data-status")) === "processing") await capture("documents-processing");
  await page.locator('tr[data-status="ready"]', { hasText: PDF_NAME }).waitFor({ timeout: 60_000 });
  expect(await row.locator("[data-status-badge]").textContent()).toBe("Ready");
  expect(await row.textContent()).toContain("New York");
  await capture("documents");
}, STEP_TIMEOUT_MS);

test("search the knowledge base from the playground: citations and the cost", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "Search" }).click();
  await capture("search-empty");
  await page.getByLabel("Question or citation").fill("destroy customer records containing personally identifiable information");
  await page.getByRole("button", { name: /^Search/ }).click();
  await page.locator("[data-search-cost]", { hasText: "Charged £0.02" }).waitFor();
  expect(await page.locator(".result").first().textContent()).toContain(PDF_NAME);
  await capture("search-results");
}, STEP_TIMEOUT_MS);

test("the overview and the ledger show the charges", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "Ledger" }).click();
  await page.waitForURL(/\/ledger$/);
  expect(await page.locator("tr[data-entry-type=top_up]").count()).toBe(1);
  expect(await page.locator("tr[data-entry-type=settle]", { hasText: PDF_NAME }).textContent()).toContain("−£0.10");
  expect(await page.locator("tr[data-entry-type=settle]", { hasText: "Search" }).textContent()).toContain("−£0.02");
  await capture("ledger");
  await page.getByLabel("Show").selectOption("top_up");
  await page.getByRole("button", { name: "Filter" }).click();
  await page.waitForURL(/type=top_up/);
  expect(await page.locator("tbody tr").count()).toBe(1);
  await capture("ledger-filtered");

  await page.getByRole("link", { name: "Overview" }).click();
  await page.waitForURL(`${server.url}/`);
  expect(await page.locator("[data-stat=available]").textContent()).toContain("£24.88");
  expect(await page.locator("[data-stat=month-spend]").textContent()).toContain("£0.12");
  expect(await page.locator(".chart svg rect.bar").count()).toBe(30);
  await capture("overview");
}, STEP_TIMEOUT_MS);

test("revoke the key: the API refuses it at once", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "API keys" }).click();
  await page.getByRole("link", { name: "Revoke key Production server" }).click();
  await capture("keys-revoke-confirm");
  await page.getByRole("button", { name: "Revoke key" }).click();
  await page.waitForURL(/\/keys\?revoked=1$/);
  await capture("keys-revoked");
  expect((await server.api("/v1/credits", { key: apiKey })).status).toBe(401);
}, STEP_TIMEOUT_MS);

test("delete a document after confirming; jurisdictions; payments not configured; sign out", async () => {
  const { page } = browser;
  await page.getByRole("link", { name: "Documents" }).click();
  await page.getByRole("link", { name: `Delete ${PDF_NAME}` }).click();
  await capture("documents-delete-confirm");
  await page.getByRole("button", { name: "Delete document" }).click();
  await page.waitForURL(/deleted=1$/);
  expect(await page.locator("tr", { hasText: PDF_NAME }).count()).toBe(0);

  await page.getByRole("link", { name: "Jurisdictions" }).click();
  await page.waitForURL(/\/jurisdictions$/);
  expect(await page.locator("tbody tr").count()).toBe(3);
  await capture("jurisdictions");

  // The same server without a payment provider: the page says so instead of offering a form.
  server.deps.config.stripeSecretKey = undefined;
  await page.getByRole("link", { name: "Top up", exact: true }).click();
  await page.locator("[data-payments=not-configured]", { hasText: "not set up" }).waitFor();
  await capture("top-up-not-configured");

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL(/\/login\?signed-out=1$/);
  await capture("signed-out");
  await page.goto(`${server.url}/keys`);
  expect(new URL(page.url()).pathname).toBe("/login");
}, STEP_TIMEOUT_MS);

test("every page: labelled controls, no sideways scrolling on a phone, nothing fetched from off this host", () => {
  for (const [name, audit] of Object.entries(audits)) {
    if (name === "fake-stripe-checkout") continue;
    expect({ name, unlabelled: audit.desktop.unlabelled }).toEqual({ name, unlabelled: [] });
    expect({ name, overflowPx: Math.max(0, audit.phone.overflowPx) }).toEqual({ name, overflowPx: 0 });
  }
  expect(browser.offHostRequests).toEqual([]);
});
