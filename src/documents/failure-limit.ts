/**
 * Who pays for a PDF that fails on its own content? The contract leaves no room for a
 * charge: a refused upload is a 400 before anything is charged, and a failed ingestion is
 * refunded in full (interface.md, billing rule 2). So such failures stay free, and instead
 * each organisation may have at most `perHour` of them in any hour: uploads refused by the
 * parser (invalid_pdf, too_many_pages) and ingestions that failed because the PDF could
 * not be read (a decompression bomb, a parse past its deadline). Past that, uploads answer
 * 429 rate_limited with Retry-After until the oldest failure is an hour old, so a hostile
 * or broken client cannot make the parsers work for nothing without end. Scanned PDFs
 * (no text layer) parse fine and do not count. In memory: limits are per process, which
 * is the deployment unit, as for the per-key rate limit.
 */
import { rateLimited } from "../errors";

const WINDOW_MS = 60 * 60 * 1000;
/** Organisations remembered at once; past it the oldest entries go first. */
const ORGANISATIONS_MAX = 100_000;

export class DocumentFailureLimit {
  /** Failure times per organisation, oldest first, at most `perHour` each. */
  private readonly failures = new Map<string, number[]>();

  /** `perHour` 0 turns the limit off. */
  constructor(private readonly perHour: number) {}

  record(orgId: string, nowMs: number): void {
    if (this.perHour <= 0) return;
    const times = this.recent(orgId, nowMs);
    times.push(nowMs);
    if (times.length > this.perHour) times.shift();
    this.failures.delete(orgId);
    if (this.failures.size >= ORGANISATIONS_MAX) this.failures.delete(this.failures.keys().next().value!);
    this.failures.set(orgId, times);
  }

  /** Throws 429 rate_limited while the organisation has `perHour` failures in the last hour. */
  check(orgId: string, nowMs: number): void {
    if (this.perHour <= 0) return;
    const times = this.recent(orgId, nowMs);
    if (times.length < this.perHour) return;
    const retryAfterSeconds = Math.max(1, Math.ceil((times[0]! + WINDOW_MS - nowMs) / 1000));
    throw rateLimited(
      `${times.length} uploads of this organisation failed on their content in the last hour (the limit is ${this.perHour}); try again in ${retryAfterSeconds} s`,
      retryAfterSeconds,
    );
  }

  private recent(orgId: string, nowMs: number): number[] {
    const times = this.failures.get(orgId) ?? [];
    while (times.length > 0 && times[0]! <= nowMs - WINDOW_MS) times.shift();
    return times;
  }
}
