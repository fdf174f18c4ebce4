import { billingTicker } from "./billing/ticker";
import type { Deps } from "./deps";
import type { BackgroundService } from "./lifecycle";

/** The long-lived parts a serving process runs besides HTTP, started in this order and stopped in reverse. */
export function backgroundServices(deps: Deps): BackgroundService[] {
  const documents: BackgroundService = {
    name: "documents",
    async start() {
      const removed = deps.documentFiles.removeStale();
      if (removed > 0) deps.log.info("stale_partial_uploads_removed", { files: removed });
      await deps.pdf.warmUp(deps.config.pdfParsersWarm);
    },
    stop: () => deps.pdf.close(),
  };
  // The replica first: runs (ingestion's read-your-writes) rely on it following.
  return [...(deps.replica ? [deps.replica] : []), documents, deps.sandbox, deps.jobs, billingTicker(deps)];
}
