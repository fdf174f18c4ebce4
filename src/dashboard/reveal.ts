/**
 * A freshly created API key waits here, in memory only, between the POST that created it and
 * the single page view that shows it (post/redirect/get: reloading the page cannot create a
 * second key, and cannot show this one again). Only the session that created it can take it.
 */
export interface RevealedKey {
  id: string;
  name: string;
  key: string;
}

export const REVEAL_TTL_MS = 5 * 60_000;
/** Bounds memory if many sessions create keys and never look at them. */
const ENTRIES_MAX = 10_000;

export class OneTimeReveal {
  private readonly entries = new Map<string, { value: RevealedKey; expiresAtMs: number }>();

  put(sessionTokenHash: string, value: RevealedKey, nowMs: number): void {
    for (const [hash, entry] of this.entries) if (entry.expiresAtMs <= nowMs) this.entries.delete(hash);
    if (this.entries.size >= ENTRIES_MAX) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(sessionTokenHash, { value, expiresAtMs: nowMs + REVEAL_TTL_MS });
  }

  /** The key once, if it is the one asked for and has not expired; it is forgotten either way. */
  take(sessionTokenHash: string, keyId: string, nowMs: number): RevealedKey | null {
    const entry = this.entries.get(sessionTokenHash);
    if (!entry || entry.value.id !== keyId) return null;
    this.entries.delete(sessionTokenHash);
    return entry.expiresAtMs > nowMs ? entry.value : null;
  }
}
