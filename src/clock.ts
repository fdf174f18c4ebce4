/** Injected everywhere time matters (holds, grants, leases) so tests control it. */
export interface Clock {
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };

export function isoFromMs(ms: number): string {
  return new Date(ms).toISOString();
}
