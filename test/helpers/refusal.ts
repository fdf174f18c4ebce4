import { Refusal } from "../../src/errors";

/** The status and code of the Refusal `fn` throws (or its promise rejects with); anything else fails the test. */
export async function refusalOf(fn: () => unknown): Promise<{ status: number; code: string }> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof Refusal) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error("expected a refusal");
}
