import { expect, test } from "bun:test";
import { DocumentFailureLimit } from "../../src/documents/failure-limit";
import { Refusal } from "../../src/errors";

const HOUR_MS = 3_600_000;

function refusal(limit: DocumentFailureLimit, orgId: string, nowMs: number): Refusal | undefined {
  try {
    limit.check(orgId, nowMs);
    return undefined;
  } catch (error) {
    if (error instanceof Refusal) return error;
    throw error;
  }
}

test("the limit counts an organisation's failures of the last hour only", () => {
  const limit = new DocumentFailureLimit(3);
  const startMs = 1_000_000;
  for (const offsetMs of [0, 10 * 60_000, 20 * 60_000]) limit.record("org-a", startMs + offsetMs);
  expect(refusal(limit, "org-b", startMs + 30 * 60_000)).toBeUndefined();
  const refused = refusal(limit, "org-a", startMs + 30 * 60_000);
  expect(refused).toMatchObject({ status: 429, code: "rate_limited", headers: { "retry-after": String(30 * 60) } });
  // The first failure leaves the window an hour after it happened.
  expect(refusal(limit, "org-a", startMs + HOUR_MS - 1)).toBeDefined();
  expect(refusal(limit, "org-a", startMs + HOUR_MS)).toBeUndefined();
});

test("0 turns it off", () => {
  const limit = new DocumentFailureLimit(0);
  for (let i = 0; i < 100; i++) limit.record("org-a", i);
  expect(refusal(limit, "org-a", 100)).toBeUndefined();
});
