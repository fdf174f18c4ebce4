import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parsePassagesJsonl } from "../../src/search/corpus/passages";
import { BINARY, runBinary } from "../helpers/binary";
import { tempDir } from "../helpers/server";

const dir = tempDir();
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the compiled binary imports its embedded sample corpus in an empty folder, idempotently", () => {
  const first = runBinary(["corpus", "import", "--sample", "--json"], { cwd: dir });
  expect(first.exitCode).toBe(0);
  expect(first.json).toMatchObject({ documents: 52, jurisdictions: 52, chunksAdded: 812, chunksRemoved: 0 });
  const again = runBinary(["corpus", "import", "--sample"], { cwd: dir });
  expect(again.exitCode).toBe(0);
  expect(again.stdout).toMatch(/^imported 52 documents, 812 passages \(0 new or changed, 812 unchanged, 0 removed\), 52 jurisdictions in [\d.]+ s/);
}, 60_000);

test("a folder of .md, .txt and .pdf files with a manifest, including a new jurisdiction", () => {
  const folder = join(dir, "policies");
  mkdirSync(folder);
  writeFileSync(
    join(folder, "handbook.md"),
    "# Incident response\n\nCall the privacy office within one hour of a suspected breach.\n\n## Regulators\n\nThe privacy office notifies the ICO within 72 hours.\n",
  );
  writeFileSync(join(folder, "retention.txt"), "§ 1. Retention\nCustomer records are kept for seven years.\n");
  copyFileSync(join(import.meta.dir, "../../../shared/corpus/pdfs-real/minnesota_325E.61.pdf"), join(folder, "mn.pdf"));
  writeFileSync(
    join(folder, "manifest.json"),
    JSON.stringify({
      jurisdictions: [{ slug: "uk", name: "United Kingdom", description: "UK law and guidance" }],
      documents: [
        { file: "handbook.md", title: "Staff handbook", jurisdictions: ["uk"] },
        { file: "retention.txt", title: "Retention policy", jurisdictions: ["uk", "eu"] },
        { file: "mn.pdf", title: "Minnesota Statutes 325E.61", jurisdictions: ["us-mn"] },
      ],
    }),
  );
  const run = runBinary(["corpus", "import", "policies", "--json"], { cwd: dir });
  expect(run.stderr).toBe("");
  expect(run.exitCode).toBe(0);
  expect(run.json).toMatchObject({ documents: 3, jurisdictions: 1, chunksRemoved: 0 });
  expect(run.json.chunksAdded).toBeGreaterThanOrEqual(3);
  expect(runBinary(["corpus", "import", "policies", "--json"], { cwd: dir }).json).toMatchObject({ chunksAdded: 0 });
  const bad = runBinary(["corpus", "import", "nowhere", "--json"], { cwd: dir });
  expect(bad.exitCode).toBe(1);
  expect(bad.json.details).toContain("no such file or folder");
}, 60_000);

test("serve re-embeds an index made by an earlier built-in embedder before it listens", async () => {
  const upgraded = tempDir();
  expect(runBinary(["corpus", "import", "--sample", "--json"], { cwd: upgraded }).exitCode).toBe(0);
  // As an earlier release left it: the same passages, vectors from another table.
  const { Database } = await import("bun:sqlite");
  const db = new Database(join(upgraded, "regkb-data", "regkb.sqlite"));
  db.query("UPDATE search_index_meta SET value = 'regkb-static-v1-256-c5c53b64' WHERE key = 'embedder_id'").run();
  db.close();
  const server = Bun.spawn([BINARY, "serve", "--port", "0"], { cwd: upgraded, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REGKB_SANDBOX_POOL_SIZE: "0" }, stdout: "pipe", stderr: "pipe" });
  try {
    const reader = server.stdout.getReader();
    let out = "";
    while (!out.includes("listening on")) out += new TextDecoder().decode((await reader.read()).value);
    server.kill("SIGTERM");
    await server.exited;
    const log = await new Response(server.stderr).text();
    expect(log).toContain('"index_reembedded"');
    expect(log).toContain('"passages":812');
  } finally {
    server.kill("SIGKILL");
    rmSync(upgraded, { recursive: true, force: true });
  }
}, 60_000);

test("a .jsonl file in the format of docs/operations.md: document and heading may be left out", () => {
  const manual = readFileSync(join(import.meta.dir, "..", "..", "docs", "operations.md"), "utf8");
  const example = /```jsonl\n([\s\S]*?)```/.exec(manual)![1]!.trim();
  const second = JSON.stringify({ ...JSON.parse(example), citationPath: "Breach procedure > 2 > (b)", heading: "Regulators", text: "The privacy office keeps a record of every breach." });
  const parsed = parsePassagesJsonl(`${example}\n${second}\n`, "example.jsonl");
  expect(parsed.map((p) => [p.document, p.heading])).toEqual([
    ["Acme Bank breach procedure", ""],
    ["Acme Bank breach procedure", "Regulators"],
  ]);
  expect(() => parsePassagesJsonl(JSON.stringify({ ...JSON.parse(example), heading: 7 }), "bad.jsonl")).toThrow("bad.jsonl:1: heading must be a string");

  const folder = join(dir, "jsonl");
  mkdirSync(folder);
  writeFileSync(join(folder, "jurisdictions.json"), JSON.stringify([{ slug: "eu", name: "European Union", description: "EU law" }]));
  writeFileSync(join(folder, "passages.jsonl"), `${example}\n${second}\n`);
  const run = runBinary(["corpus", "import", join(folder, "passages.jsonl"), "--json"], { cwd: dir });
  expect(run.stderr).toBe("");
  expect(run.json).toMatchObject({ documents: 1, chunksAdded: 2, chunksRemoved: 0 });
}, 60_000);
