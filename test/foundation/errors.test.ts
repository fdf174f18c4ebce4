import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { ERROR_CODES } from "../../src/http/errors";

const SRC = join(import.meta.dir, "..", "..", "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
  );
}

test("every error the API raises is in the one error table, with its status", () => {
  // The dashboard and the command line have codes of their own (user_exists, invalid_credentials).
  const apiFiles = sourceFiles(SRC).filter((file) => !/^(dashboard|cli)\//.test(relative(SRC, file)));
  const raised: [string, number, string][] = [];
  for (const file of apiFiles) {
    for (const m of readFileSync(file, "utf8").matchAll(/new ApiError\(\s*(\d{3}),\s*"([a-z_]+)"/g)) raised.push([m[2]!, Number(m[1]), relative(SRC, file)]);
  }
  expect(raised.length).toBeGreaterThanOrEqual(15);
  for (const [code, status, file] of raised) {
    expect(ERROR_CODES, `${file} raises ${code}`).toHaveProperty(code);
    const spec: { status: number } = ERROR_CODES[code as keyof typeof ERROR_CODES];
    expect(spec.status, `${file} raises ${code} as ${status}`).toBe(status);
  }
});
