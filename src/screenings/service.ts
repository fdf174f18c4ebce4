import { release, settleAndRelease } from "../billing/ledger";
import { screeningPence, screeningPriceText } from "../billing/pricing";
import type { Deps } from "../deps";
import { notFound } from "../errors";
import { isUuid } from "../ids";
import { createReservedRun } from "../jobs/reserved-run";
import { findRun } from "../jobs/store";
import type { Run, RunKindSpec, RunStatus } from "../jobs/types";
import type { SearchMatch } from "../search/request";
import { resolveJurisdictions, searchKnowledgeBase } from "../search/service";

export const SCREENING_RUN_KIND = "screening";
export const SCREENING_KEYWORDS_MAX = 100;
export const SCREENING_KEYWORD_CHARS_MAX = 1000;
export const SCREENING_TOP_K_MAX = 20;
export const SCREENING_TOP_K_DEFAULT = 5;

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

/** Validates the jurisdictions, then holds keywords × 2p with the run (createReservedRun). */
export function createScreening(
  deps: Deps,
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
  const estimatedCostPence = screeningPence(input.keywords.length);
  createReservedRun(deps, {
    id,
    orgId,
    kind: SCREENING_RUN_KIND,
    input,
    holdPence: estimatedCostPence,
    holdDescription: `${screeningName(id, input)}: hold for ${screeningPriceText(input.keywords.length)}`,
  });
  return { id, status: "pending", estimatedCostPence };
}

/** The organisation's screening; an unknown, malformed or another organisation's id is 404. */
export function getScreening(deps: Deps, orgId: string, id: string): Screening {
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
export function screeningRunKind(deps: Deps): RunKindSpec<ScreeningInput, ScreeningOutput> {
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
    onCompleted(db, run) {
      const actualPence = screeningPence(run.input.keywords.length);
      settleAndRelease(db, { orgId: run.orgId, runId: run.id, actualPence, description: `${screeningName(run.id, run.input)} completed: ${screeningPriceText(run.input.keywords.length)}`, nowMs: deps.clock.nowMs() });
    },
    onFailed(db, run) {
      release(db, { orgId: run.orgId, runId: run.id, description: `${screeningName(run.id, run.input)} failed: hold returned, nothing charged`, nowMs: deps.clock.nowMs() });
    },
  };
}

/** How the ledger names a screening: "screening <id>", or "screening <id> (MCP)". */
function screeningName(id: string, input: ScreeningInput): string {
  return input.via ? `screening ${id} (${input.via})` : `screening ${id}`;
}
