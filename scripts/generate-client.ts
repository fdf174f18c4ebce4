// Regenerates clients/typescript/src/schema.d.ts from the OpenAPI document the server serves,
// with the independent generator customers would use (openapi-typescript, pinned in the
// client's package.json). test/clients/typescript.test.ts fails when the committed file is stale.
//
//   bun scripts/generate-client.ts
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createDeps } from "../src/deps";

const CLIENT_DIR = join(import.meta.dir, "..", "clients", "typescript");
export const CLIENT_SCHEMA_FILE = join(CLIENT_DIR, "src", "schema.d.ts");
const GENERATOR = join(CLIENT_DIR, "node_modules", "openapi-typescript", "bin", "cli.js");

/** openapi-typescript's output for this document text, run by Node as a customer would. */
export function generateClientTypes(documentJson: string): string {
  const dir = mkdtempSync(join(tmpdir(), "regkb-client-"));
  try {
    const input = join(dir, "openapi.json");
    const output = join(dir, "schema.d.ts");
    writeFileSync(input, documentJson);
    // Run from the client's folder: the generator must not pick up the repository's redocly.yaml.
    // --default-non-nullable false: a request field with a default (topK) stays optional.
    const run = Bun.spawnSync(["node", GENERATOR, input, "--output", output, "--default-non-nullable", "false"], {
      cwd: CLIENT_DIR,
      stdout: "pipe",
      stderr: "pipe",
    });
    if (run.exitCode !== 0) throw new Error(`openapi-typescript failed: ${run.stderr.toString()}`);
    return readFileSync(output, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The document exactly as GET /v1/openapi.json serves it, from an app over a throwaway data folder. */
async function servedDocument(): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), "regkb-client-data-"));
  try {
    const config = loadConfig({ REGKB_LOG_LEVEL: "silent", REGKB_SANDBOX_POOL_SIZE: "0" }, { dataDir, port: 0, host: "127.0.0.1" });
    const deps = await createDeps(config);
    const response = await buildApp(deps).handle(new Request("http://localhost/v1/openapi.json"));
    const text = await response.text();
    await deps.vectorSearchPool?.close();
    deps.db.close();
    return text;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await Bun.write(CLIENT_SCHEMA_FILE, generateClientTypes(await servedDocument()));
  console.log(`wrote ${CLIENT_SCHEMA_FILE}`);
}
