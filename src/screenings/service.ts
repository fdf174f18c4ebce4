import { screeningPence, screeningPriceText } from "../billing/pricing";
import type { Clock } from "../clock";
import type { Config } from "../config";
import type { SqlDatabase } from "../db/sql-database";
import { notFound } from "../errors";
import { isUuid } from "../ids";
import { reservedRunKind, type PaidRunDeps } from "../jobs/paid-run";
import { findRun } from "../jobs/store";
import type { Run, RunKindSpec, RunStatus } from "../jobs/types";
import type { SearchMatch } from "../search/request";
import type { SearchDeps } from "../search/search-index";
import { resolveJurisdictions, searchKnowledgeBase } from "../search/service";

export const SCREENING_RUN_KIND = "screening";
export const SCREENING_KEYWORDS_MAX = 100;
export const SCREENING_KEYWORD_CHARS_MAX = 1000;
export const SCREENING_TOP_K_MAX = 20;
export const SCREENING_TOP_K_DEFAULT = 5;

/** What screenings use: paid runs, the search, and their settings. */
export interface ScreeningDeps extends PaidRunDeps, SearchDeps {
  clock: Clock;
  config: Pick<Config, "screeningConcurrency" | "testHookScreeningKeywordDelayMs">;
}

export interface ScreeningInput {
  keywords: string[];
  /** Resolved at creation (the organisation's enabled set by default), so later changes do not alter the run. */
  jurisdictions: string[];
  topK: number;
  /** Where the screening was started when not the API: named in its ledger entries ("screening <id> (MCP) …"). */
  via?: "MCP";
}

export interface ScreeningResult {
  keyword: string;
  matches: SearchMatch[];
}

export interface ScreeningOutput {
  results: ScreeningResult[];
}

export interface Screening {
  id: string;
  status: RunStatus;
  keywords: string[];
  jurisdictions: string[];
  results?: ScreeningResult[];
  error?: string;
  createdAtMs: number;
  completedAtMs?: number;
}

/** Holds keywords × 2p with the run; settles the same on completion, releases it all on failure. */
const screeningMoney = reservedRunKind<ScreeningInput, ScreeningOutput>({
  kind: SCREENING_RUN_KIND,
  holdPence: (input) => screeningPence(input.keywords.length),
  actualPence: (run) => screeningPence(run.input.keywords.length),
  describe: {
    hold: (id, input) => `${screeningName(id, input)}: hold for ${screeningPriceText(input.keywords.length)}`,
    completed: (run) => `${screeningName(run.id, run.input)} completed: ${screeningPriceText(run.input.keywords.length)}`,
    failed: (run) => `${screeningName(run.id, run.input)} failed: hold returned, nothing charged`,
  },
});

/** Validates the jurisdictions, then holds keywords × 2p with the run. */
export function createScreening(
  deps: ScreeningDeps,
  orgId: string,
  id: string,
  request: { keywords: string[]; jurisdictions?: string[]; topK?: number },
  options: { via?: "MCP" } = {},
): { id: string; status: "pending"; estimatedCostPence: number } {
  const input: ScreeningInput = {
    keywords: request.keywords,
    jurisdictions: resolveJurisdictions(deps, orgId, request.jurisdictions),
    topK: request.topK ?? SCREENING_TOP_K_DEFAULT,
    ...(options.via ? { via: options.via } : {}),
  };
  const { estimatedCostPence } = screeningMoney.create(deps, { id, orgId, input });
  return { id, status: "pending", estimatedCostPence };
}

/** The organisation's screening; an unknown, malformed or another organisation's id is 404. */
export function getScreening(deps: { db: SqlDatabase }, orgId: string, id: string): Screening {
  const run = isUuid(id) ? (findRun(deps.db, { id, orgId, kind: SCREENING_RUN_KIND }) as Run<ScreeningInput, ScreeningOutput> | undefined) : undefined;
  if (!run) throw notFound(`screening ${id.slice(0, 64)} does not exist`);
  return {
    id: run.id,
    status: run.status,
    keywords: run.input.keywords,
    jurisdictions: run.input.jurisdictions,
    ...(run.output ? { results: run.output.results } : {}),
    ...(run.error !== null ? { error: run.error } : {}),
    createdAtMs: run.createdAtMs,
    ...(run.completedAtMs !== null ? { completedAtMs: run.completedAtMs } : {}),
  };
}

/**
 * Searches each keyword in the order given with the same hybrid search as POST /search.
 * One keyword at a time, yielding to the event loop between them, so HTTP requests and
 * lease renewal interleave with a 100-keyword run (each search is a few ms of CPU).
 */
export function screeningRunKind(deps: ScreeningDeps): RunKindSpec<ScreeningInput, ScreeningOutput> {
  const delayMs = deps.config.testHookScreeningKeywordDelayMs;
  return {
    kind: SCREENING_RUN_KIND,
    concurrency: deps.config.screeningConcurrency,
    async execute(run, signal) {
      const { keywords, jurisdictions, topK } = run.input;
      const results: ScreeningResult[] = [];
      for (const keyword of keywords) {
        signal.throwIfAborted();
        if (delayMs > 0) await Bun.sleep(delayMs);
        else await new Promise<void>((resume) => setImmediate(resume));
        results.push({ keyword, matches: await searchKnowledgeBase(deps, { orgId: run.orgId, query: keyword, jurisdictions, topK }) });
      }
      return { results };
    },
    onCompleted: (db, run, output) => screeningMoney.settle(db, run, output, deps.clock.nowMs()),
    onFailed: (db, run) => screeningMoney.release(db, run, deps.clock.nowMs()),
  };
}

/** How the ledger names a screening: "screening <id>", or "screening <id> (MCP)". */
function screeningName(id: string, input: ScreeningInput): string {
  return input.via ? `screening ${id} (${input.via})` : `screening ${id}`;
}
