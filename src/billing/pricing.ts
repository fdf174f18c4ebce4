/**
 * Every price in one table (interface.md "Pricing", decisions.md "Money"). Integer pence only.
 * Callers never compute a price themselves; they call these.
 */
export const searchPence = 2;
export const screeningPencePerKeyword = 2;
export const documentPagesMax = 500;
export const documentPenceMin = 10;
export const documentPencePerPage = 2;
export const executionBasePence = 5;
export const executionPencePerSecond = 1;

/** Ingestion: 2p per page, never less than 10p; pages are counted before ingestion starts. */
export function documentPence(pages: number): number {
  assertPositiveInteger(pages, "pages");
  return Math.max(documentPenceMin, documentPencePerPage * pages);
}

export function screeningPence(keywordCount: number): number {
  assertPositiveInteger(keywordCount, "keywordCount");
  return screeningPencePerKeyword * keywordCount;
}

/** A screening's price as its ledger entries show it: "3 keywords × 2p". */
export function screeningPriceText(keywordCount: number): string {
  assertPositiveInteger(keywordCount, "keywordCount");
  return `${keywordCount} keyword${keywordCount === 1 ? "" : "s"} × ${screeningPencePerKeyword}p`;
}

/** The worst case, held before an execution starts: 5p + 1p × the timeout in seconds. */
export function executionReservePence(timeoutSeconds: number): number {
  assertPositiveInteger(timeoutSeconds, "timeoutSeconds");
  return executionBasePence + executionPencePerSecond * timeoutSeconds;
}

/** 5p + 1p per started second of wall-clock runtime, never more than the reservation. */
export function executionCostPence(durationMs: number, timeoutSeconds: number): number {
  if (!Number.isFinite(durationMs) || durationMs < 0) throw new RangeError("durationMs must be a non-negative number");
  const startedSeconds = Math.ceil(durationMs / 1000);
  return Math.min(executionBasePence + executionPencePerSecond * startedSeconds, executionReservePence(timeoutSeconds));
}

function assertPositiveInteger(value: number, name: string): void {
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
}
