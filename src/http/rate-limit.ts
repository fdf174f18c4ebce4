import { rateLimited } from "../errors";

/** Bound on remembered keys, so a flood of distinct keys cannot grow memory without limit. */
const BUCKETS_MAX = 100_000;

/**
 * Token bucket per API key: `perMinute` tokens refill continuously, burst up to
 * `perMinute`. In memory: limits are per process, which is the deployment unit.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; updatedMs: number }>();

  constructor(private readonly perMinute: number) {}

  take(keyId: string, nowMs: number): void {
    if (this.perMinute <= 0) return;
    const refillPerMs = this.perMinute / 60_000;
    const bucket = this.buckets.get(keyId) ?? { tokens: this.perMinute, updatedMs: nowMs };
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (nowMs - bucket.updatedMs) * refillPerMs);
    bucket.updatedMs = nowMs;
    if (bucket.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / refillPerMs / 1000));
      throw rateLimited(`more than ${this.perMinute} requests per minute for this key`, retryAfterSeconds);
    }
    bucket.tokens -= 1;
    if (!this.buckets.has(keyId) && this.buckets.size >= BUCKETS_MAX) this.buckets.clear();
    this.buckets.set(keyId, bucket);
  }
}
