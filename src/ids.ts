/** Time-sortable ids for ledger entries, requests, orders, runs and documents (decisions.md). */
export function uuidv7(): string {
  return Bun.randomUUIDv7();
}

export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A malformed id cannot name a resource, so callers answer 404 rather than 400. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
