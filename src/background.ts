import { billingTicker } from "./billing/ticker";
import type { Deps } from "./deps";
import type { BackgroundService } from "./server";

/** The long-lived parts a serving process runs besides HTTP, started in this order and stopped in reverse. */
export function backgroundServices(deps: Deps): BackgroundService[] {
  const pdfParsers: BackgroundService = { name: "pdf-parsers", start() {}, stop: () => deps.pdf.close() };
  return [pdfParsers, deps.sandbox, deps.jobs, billingTicker(deps)];
}
