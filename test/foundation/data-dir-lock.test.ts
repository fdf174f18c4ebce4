import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { tryLockDataDir } from "../../src/db/data-dir-lock";
import { tempDir } from "../helpers/server";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a data directory's lock has one holder at a time, and is free again once released", () => {
  const first = tryLockDataDir(dir);
  expect(first).toBeDefined();
  expect(tryLockDataDir(dir)).toBeUndefined();
  first!.release();
  const again = tryLockDataDir(dir);
  expect(again).toBeDefined();
  again!.release();
});
