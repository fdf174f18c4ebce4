import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

/** Debian's chromium, driven by playwright-core (`npx playwright install` cannot run here). */
export const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
];

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };
export const SCREENSHOT_DIR = join(import.meta.dir, "..", "..", "test-artifacts", "screenshots");

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Every request the browser made whose host is not 127.0.0.1 (they are blocked, and must stay empty). */
  offHostRequests: string[];
  close(): Promise<void>;
}

/** A fresh profile each run; every request off 127.0.0.1 is recorded and refused. */
export async function openBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), "regkb-chromium-"));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: ARGS, viewport: DESKTOP });
  const offHostRequests: string[] = [];
  await context.route("**/*", (route) => {
    const url = new URL(route.request().url());
    if ((url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "127.0.0.1") {
      offHostRequests.push(url.href);
      return route.abort();
    }
    return route.continue();
  });
  context.on("request", (request) => {
    const url = new URL(request.url());
    if (url.protocol !== "data:" && url.protocol !== "about:" && url.hostname !== "127.0.0.1" && !offHostRequests.includes(url.href)) {
      offHostRequests.push(url.href);
    }
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    offHostRequests,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface PageAudit {
  unlabelled: string[];
  overflowPx: number;
}

/** Form controls a person cannot identify, and how far the page spills sideways at the current width. */
export async function auditPage(page: Page): Promise<PageAudit> {
  return page.evaluate(() => {
    const controls = Array.from(document.querySelectorAll("input, select, textarea")) as (HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement)[];
    const unlabelled = controls
      .filter((el) => !(el instanceof HTMLInputElement && (el.type === "hidden" || el.hidden)))
      .filter((el) => (el.labels?.length ?? 0) === 0 && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby"))
      .map((el) => el.outerHTML.slice(0, 120));
    return { unlabelled, overflowPx: document.documentElement.scrollWidth - window.innerWidth };
  });
}

/** Saves `<name>-desktop.png` and `<name>-phone.png` (full page) and audits both layouts. */
export async function snap(page: Page, name: string): Promise<{ desktop: PageAudit; phone: PageAudit }> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-desktop.png`), fullPage: true });
  const desktop = await auditPage(page);
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}-phone.png`), fullPage: true });
  const phone = await auditPage(page);
  await page.setViewportSize(DESKTOP);
  return { desktop, phone };
}
