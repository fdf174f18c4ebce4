/** Time-sortable ids for ledger entries, requests, orders, runs and documents (decisions.md). */
export function uuidv7(): string {
  return Bun.randomUUIDv7();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A malformed id cannot name a resource, so callers answer 404 rather than 400. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
