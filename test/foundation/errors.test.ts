import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describeError } from "../../src/dashboard/guard";
import {
  API_ERROR_CODES,
  ERROR_CODES,
  ERRORS,
  insufficientCredit,
  payloadTooLarge,
  rateLimited,
  Refusal,
  storageFull,
  unauthorized,
  type ErrorSpec,
} from "../../src/errors";

const SRC = join(import.meta.dir, "..", "..", "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

describe("the one error table", () => {
  test("every code has a status, a title, when it is raised and an example", () => {
    for (const code of ERROR_CODES) {
      const spec: ErrorSpec = ERRORS[code];
      expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(spec.status, code).toBeGreaterThanOrEqual(400);
      expect(spec.status, code).toBeLessThan(600);
      for (const text of [spec.title, spec.when, spec.example]) expect(text.trim().length, code).toBeGreaterThan(0);
    }
    // The dashboard's and the command line's own codes stay out of the API's Error body.
    expect(API_ERROR_CODES).not.toContain("user_exists");
    expect(API_ERROR_CODES).not.toContain("invalid_credentials");
    expect(API_ERROR_CODES).toContain("storage_full");
  });

  test("a refusal takes its status from the table and leaves as the Error body", () => {
    for (const code of ERROR_CODES) {
      const refusal = new Refusal(code, "why");
      expect(refusal.status).toBe(ERRORS[code].status);
      expect(refusal.body()).toEqual({ error: code, details: "why" });
    }
    expect(insufficientCredit(1, 2).body()).toEqual({ error: "insufficient_credit", details: "available 1 pence, required 2 pence" });
    expect(payloadTooLarge(10, 11).details).toBe("request body is 11 bytes; the limit is 10 bytes");
    expect(payloadTooLarge(10).details).toBe("the upload limit is 10 bytes");
  });

  test("the headers the table lists are the ones its constructors send", () => {
    const sent: Refusal[] = [unauthorized("no key"), rateLimited("slow", 7), storageFull()];
    for (const refusal of sent) {
      const listed: readonly string[] = (ERRORS[refusal.code] as ErrorSpec).headers ?? [];
      expect(Object.keys(refusal.headers).toSorted(), refusal.code).toEqual(listed.map((h) => h.toLowerCase()).toSorted());
    }
    expect(rateLimited("slow", 7).headers).toEqual({ "retry-after": "7" });
  });

  test("the dashboard's headline for a refusal is the table's title", () => {
    for (const code of ERROR_CODES) {
      expect(describeError(new Refusal(code, "why"))).toEqual({ title: ERRORS[code].title, details: "why", status: ERRORS[code].status });
    }
    expect(() => describeError(new Error("boom"))).toThrow("boom");
  });
});

describe("services throw a plain refusal", () => {
  test("no status is written beside a code: no ApiError, no Error body written by hand", () => {
    const offenders: string[] = [];
    for (const file of sourceFiles(SRC)) {
      if (relative(SRC, file) === "errors.ts") continue;
      const text = readFileSync(file, "utf8");
      if (/\bApiError\b|\berror: "[a-z_]+"/.test(text)) offenders.push(relative(SRC, file));
    }
    expect(offenders).toEqual([]);
  });

  test("the API raises only the API's codes; the dashboard's and the command line's stay theirs", () => {
    const apiFiles = sourceFiles(SRC).filter((file) => !/^(dashboard|cli)\//.test(relative(SRC, file)));
    const raised: [string, string][] = [];
    for (const file of apiFiles) {
      for (const m of readFileSync(file, "utf8").matchAll(/new Refusal\(\s*"([a-z_]+)"/g)) raised.push([m[1]!, relative(SRC, file)]);
    }
    expect(raised.length).toBeGreaterThanOrEqual(5);
    for (const [code, file] of raised) expect(API_ERROR_CODES as string[], `${file} raises ${code}`).toContain(code);
  });
});
