import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { API_ERROR_CODES, ERRORS } from "../../src/errors";
import { startTestServer, tempDir, type TestServer } from "../helpers/server";

const ROOT = join(import.meta.dir, "..", "..");
let server: TestServer;
let doc: any;

beforeAll(async () => {
  server = await startTestServer({ background: false });
  doc = (await server.api("/v1/openapi.json")).body;
});
afterAll(() => server.stop());

/** Every schema object in the document, with where it sits. */
function schemasIn(node: unknown, where = "#", out: { where: string; schema: any }[] = []) {
  if (Array.isArray(node)) node.forEach((item, i) => schemasIn(item, `${where}/${i}`, out));
  else if (typeof node === "object" && node !== null) {
    const record = node as Record<string, unknown>;
    if (typeof record.type === "string" || Array.isArray(record.type) || record.anyOf || record.$ref) out.push({ where, schema: record });
    for (const [key, value] of Object.entries(record)) if (key !== "examples" && key !== "example") schemasIn(value, `${where}/${key}`, out);
  }
  return out;
}

const operations = () =>
  Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method, path, op })),
  );

describe("named schemas", () => {
  test("each resource and request body is one component, referenced wherever it is used", () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of ["Error", "SearchMatch", "Jurisdiction", "CreditBalance", "LedgerEntry", "ScreeningRun", "Document", "ExecutionRun"]) {
      expect(names).toContain(name);
    }
    for (const name of ["SearchRequest", "ScreeningRequest", "ExecutionRequest", "TopUpRequest", "DocumentUpload"]) expect(names).toContain(name);
    // No request or response in paths is written out inline: all are references.
    for (const { op, method, path } of operations()) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        if (path !== "/v1/webhooks/stripe") expect(media.schema.$ref, `${method} ${path} ${type}`).toBeDefined();
      }
      for (const [status, response] of Object.entries<any>(op.responses)) {
        expect(response.content["application/json"].schema.$ref, `${method} ${path} ${status}`).toBeDefined();
      }
    }
    // One SearchMatch: nothing else in the document has its shape.
    const lookalikes = schemasIn(doc).filter(({ schema }) => schema.properties?.content && schema.properties?.score);
    expect(lookalikes.map((l) => l.where)).toEqual(["#/components/schemas/SearchMatch"]);
    const matchRefs = JSON.stringify(doc).match(/"#\/components\/schemas\/SearchMatch"/g) ?? [];
    expect(matchRefs.length).toBe(2); // search results and screening matches
  });

  test("SearchMatch carries the optional title and highlights", () => {
    const match = doc.components.schemas.SearchMatch;
    expect(match.required).toEqual(["content", "score"]);
    expect(match.properties.title).toEqual({
      type: "string",
      description: "Title of the provision the passage belongs to (e.g. \"Right to erasure ('right to be forgotten')\"), when it has one.",
    });
    expect(match.properties.highlights).toMatchObject({
      type: "object",
      required: ["snippet", "terms"],
      properties: { snippet: { type: "string" }, terms: { type: "array", items: { type: "string" } } },
      description:
        "Why the passage matched: `terms`, the query words (or their expansions) found in it, and `snippet`, a short extract around them.",
    });
  });
});

describe("types a generated client can use", () => {
  test("integers are plain integers, never string-or-integer", () => {
    const all = schemasIn(doc);
    for (const { where, schema } of all) {
      expect(schema.format, where).not.toBe("integer");
      for (const member of schema.anyOf ?? []) expect(member.type, where).not.toBe("string");
    }
    const integerFields = /Pence$|^topK$|^timeoutSeconds$|^pages$|^exitCode$|^durationMs$/;
    let seen = 0;
    for (const { where, schema } of all) {
      for (const [name, property] of Object.entries<any>(schema.properties ?? {})) {
        if (!integerFields.test(name)) continue;
        seen++;
        expect([property.type].flat()[0], `${where}.${name}`).toBe("integer");
      }
    }
    expect(seen).toBeGreaterThanOrEqual(15);
  });

  test("limit and offset are optional with their defaults; path ids are uuids", () => {
    const ledger = doc.paths["/v1/credits/ledger"].get.parameters;
    expect(ledger).toEqual([
      { name: "limit", in: "query", required: false, schema: expect.objectContaining({ type: "integer", minimum: 1, maximum: 200, default: 50 }) },
      { name: "offset", in: "query", required: false, schema: expect.objectContaining({ type: "integer", minimum: 0, maximum: 1_000_000, default: 0 }) },
    ]);
    const pathParameters = operations().flatMap(({ op }) => (op.parameters ?? []).filter((p: any) => p.in === "path"));
    expect(pathParameters.length).toBe(4);
    for (const p of pathParameters) expect(p).toMatchObject({ name: "id", required: true, schema: { type: "string", format: "uuid" } });
  });

  test("JSON operations declare application/json only; uploads multipart only", () => {
    for (const { op, method, path } of operations()) {
      const types = Object.keys(op.requestBody?.content ?? {});
      if (method === "get" || method === "delete") expect(types).toEqual([]);
      else expect(types, `${method} ${path}`).toEqual([path === "/v1/documents" ? "multipart/form-data" : "application/json"]);
    }
  });

  test("a new run or document's status is a constant", () => {
    const schemas = doc.components.schemas;
    expect(schemas.DocumentCreated.properties.status).toEqual({ const: "processing", type: "string" });
    expect(schemas.ScreeningCreated.properties.status).toEqual({ const: "pending", type: "string" });
    expect(schemas.ExecutionCreated.properties.status).toEqual({ const: "pending", type: "string" });
  });

  test("the Error body's codes are docs/api.md's error table and src/errors.ts's, status for status", async () => {
    const apiDoc = await Bun.file(join(ROOT, "docs", "api.md")).text();
    const rows = [...apiDoc.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])] as const);
    expect(new Map(rows)).toEqual(new Map(API_ERROR_CODES.map((code) => [code, ERRORS[code].status])));
    const documented = new Map<string, number>();
    for (const { op } of operations()) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        for (const code of Object.keys(response.content["application/json"].examples ?? {})) documented.set(code, Number(status));
      }
    }
    expect(doc.components.schemas.Error.properties.error.enum.toSorted()).toEqual(rows.map(([code]) => code).toSorted());
    expect(new Map(rows as [string, number][])).toEqual(documented);
  });
});

describe("lint", () => {
  test("@redocly/cli under recommended-strict finds nothing, with no network at all", async () => {
    const dir = tempDir("regkb-lint-");
    const file = join(dir, "openapi.json");
    await Bun.write(file, JSON.stringify(doc, null, 2));
    const config = await Bun.file(join(ROOT, "redocly.yaml")).text();
    expect(config).toContain("- recommended-strict");
    expect(config).toContain("telemetry: off");
    const redocly = ["node", join(ROOT, "node_modules/@redocly/cli/bin/cli.js"), "lint", "--config", join(ROOT, "redocly.yaml"), file];
    // In a network namespace of its own (no interface is up): nothing it needs is fetched.
    const lint = Bun.spawnSync(["unshare", "--user", "--map-root-user", "--net", ...redocly], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const output = `${lint.stdout.toString()}${lint.stderr.toString()}`;
    expect(output).toContain("Your API description is valid");
    expect(output).not.toMatch(/You have \d+ warning/);
    expect(lint.exitCode).toBe(0);
  }, 60_000);
});
