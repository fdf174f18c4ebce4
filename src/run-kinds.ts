import type { Deps } from "./deps";
import { documentIngestSpec } from "./documents/ingest";
import { executionRunKind } from "./executions/service";
import { screeningRunKind } from "./screenings/service";

/**
 * Every kind of background run, registered with the engine in one place when the app is
 * built (registering again replaces: buildApp may run twice on one Deps in tests).
 */
export function registerRunKinds(deps: Deps): void {
  deps.jobs.register(screeningRunKind(deps));
  deps.jobs.register(documentIngestSpec(deps));
  deps.jobs.register(executionRunKind(deps));
}
