// `regkb backup --database-url` through the compiled binary: an installation built by the
// real services, moved into PostgreSQL, backed up into a new data directory that holds every
// table row for row, every PDF byte for byte, the same balances (credits verify passes), and
// answers searches over HTTP exactly as the source does under `regkb serve`. An existing
// --to and a PostgreSQL whose stored balances disagree with its entries are refused and leave
// nothing; ledger entries committed during the backup are in it as a prefix, or not at all.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { COPIED_TABLES } from "../../src/db/postgres/copy-tables";
import { documentPath } from "../../src/documents/files";
import { readListeningUrl, requireBinary, runBinary } from "../helpers/binary";
import { buildInstallation, columnsOf, normaliseRows } from "../helpers/installation";
import { usePostgres } from "../helpers/postgres";
import { tempDir, type TestOrg } from "../helpers/server";
import questionsFile from "../search-quality/questions.json";

const pg = usePostgres();
const sourceDir = tempDir("regkb-backup-source-");
const workDir = tempDir("regkb-backup-work-");
const backupDir = join(workDir, "backup");
let org: TestOrg;

const QUESTIONS = (questionsFile.questions as { query: string }[]).slice(0, 4).map((q) => q.query);
const BASE_ENV = { PATH: "/usr/bin:/bin", HOME: "/tmp", REGKB_LOG_LEVEL: "error", REGKB_SANDBOX_POOL_SIZE: "0" };

beforeAll(async () => {
  org = await buildInstallation(sourceDir);
  const copied = runBinary(["migrate-to-postgres", "--from", sourceDir, "--database-url", pg.url, "--json"]);
  expect(copied.exitCode, copied.stderr).toBe(0);
}, 180_000);

afterAll(() => {
  for (const dir of [sourceDir, workDir]) rmSync(dir, { recursive: true, force: true });
});

function backup(url: string, to: string) {
  return runBinary(["backup", "--database-url", url, "--to", to, "--json"]);
}

/** A database of its own holding the source installation, for a test that changes it. */
async function freshCopy(): Promise<string> {
  const url = await pg.createDatabase();
  const copied = runBinary(["migrate-to-postgres", "--from", sourceDir, "--database-url", url]);
  expect(copied.exitCode, copied.stderr).toBe(0);
  return url;
}

function openReadOnly(dataDir: string): Database {
  return new Database(join(dataDir, "regkb.sqlite"), { readonly: true, strict: true });
}

test("the backup directory holds every table row for row, every PDF byte for byte, the same balances; credits verify passes on it", async () => {
  const run = backup(pg.url, backupDir);
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout + run.stderr).not.toContain(decodeURIComponent(new URL(pg.url).password));
  expect(existsSync(`${backupDir}.partial`)).toBe(false);
  const [source, copy] = [openReadOnly(sourceDir), openReadOnly(backupDir)];
  try {
    for (const plan of COPIED_TABLES) {
      const { table, where } = plan;
      const columns = await columnsOf(pg.sql, plan);
      const select = `SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"${where ? ` WHERE ${where}` : ""}`;
      const expected = normaliseRows(source.query<Record<string, unknown>, []>(select).all());
      expect(normaliseRows(copy.query<Record<string, unknown>, []>(select).all()), table).toEqual(expected);
      if (table !== "search_index_meta") expect(run.json.rows[table], table).toBe(expected.length);
    }
    expect(run.json.rows.search_chunks).toBeGreaterThan(800);
    expect(run.json.rows.ledger_entries).toBeGreaterThan(5);
    // Written in PostgreSQL's numbering (seq), which is the source's own order here.
    const inSeqOrder: { id: string }[] = await pg.sql`SELECT id FROM ledger_entries ORDER BY seq`;
    expect(copy.query<{ id: string }, []>("SELECT id FROM ledger_entries ORDER BY rowid").all()).toEqual(inSeqOrder);
    expect(copy.query<{ id: string }, []>("SELECT id FROM ledger_entries ORDER BY rowid").all()).toEqual(
      source.query<{ id: string }, []>("SELECT id FROM ledger_entries ORDER BY rowid").all(),
    );
    const balances = "SELECT org_id, balance_pence, held_pence FROM credit_balances";
    expect(normaliseRows(copy.query<Record<string, unknown>, []>(balances).all())).toEqual(normaliseRows(source.query<Record<string, unknown>, []>(balances).all()));

    const documents = source.query<{ id: string; org_id: string }, []>("SELECT id, org_id FROM documents").all();
    expect(documents.length).toBe(1);
    expect(run.json.rows.document_files).toBe(1);
    for (const d of documents) {
      const original = await Bun.file(documentPath(sourceDir, d.org_id, d.id)).bytes();
      expect(Buffer.from(await Bun.file(documentPath(backupDir, d.org_id, d.id)).bytes()).equals(Buffer.from(original))).toBe(true);
      expect(run.json.pdfBytes).toBe(original.byteLength);
    }
  } finally {
    source.close();
    copy.close();
  }
  const verify = runBinary(["credits", "verify", "--data-dir", backupDir, "--json"]);
  expect(verify.exitCode, verify.stderr).toBe(0);
  expect(verify.json).toEqual({ organisations: 2, entries: run.json.ledger.entries, mismatches: [], holdProblems: [], ok: true });
}, 180_000);

function serve(dataDir: string) {
  return Bun.spawn([requireBinary(), "serve", "--data-dir", dataDir, "--port", "0"], { env: BASE_ENV, stdout: "pipe", stderr: "pipe" });
}

async function searchOver(dataDir: string): Promise<unknown[]> {
  const server = serve(dataDir);
  try {
    const url = await readListeningUrl(server.stdout);
    const answers: unknown[] = [];
    for (const query of QUESTIONS) {
      const res = await fetch(`${url}/v1/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${org.key}`, "content-type": "application/json" },
        body: JSON.stringify({ query, topK: 10 }),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { results: { citationPath: string; source: string; score: number; text: string }[] };
      expect(body.results.length).toBeGreaterThan(0);
      answers.push(body.results.map((r) => ({ citationPath: r.citationPath, source: r.source, score: r.score, text: r.text })));
    }
    return answers;
  } finally {
    server.kill("SIGTERM");
    await server.exited;
  }
}

test("regkb serve --data-dir BACKUP starts and answers the judged questions over HTTP as the source does", async () => {
  expect(existsSync(join(backupDir, "regkb.sqlite"))).toBe(true);
  expect(await searchOver(backupDir)).toEqual(await searchOver(sourceDir));
}, 120_000);

test("an existing, non-empty --to is refused and left as it was", () => {
  const occupied = join(workDir, "occupied");
  mkdirSync(occupied);
  writeFileSync(join(occupied, "keep.txt"), "mine");
  const run = backup(pg.url, occupied);
  expect(run.exitCode).toBe(1);
  expect(run.stderr).toContain(`${occupied} already exists and is not an empty directory: back up into a new (or empty) directory`);
  expect(readdirSync(occupied)).toEqual(["keep.txt"]);
  expect(existsSync(`${occupied}.partial`)).toBe(false);
});

test("a PostgreSQL database without regkb's schema is refused in one line, leaving nothing", async () => {
  const to = join(workDir, "from-empty");
  const run = backup(await pg.createDatabase(), to);
  expect(run.exitCode).toBe(1);
  expect(run.stderr).toContain("the PostgreSQL database has no regkb schema (schema_migrations is missing): nothing to back up; no backup was written");
  expect(existsSync(to)).toBe(false);
  expect(existsSync(`${to}.partial`)).toBe(false);
}, 60_000);

test("a PostgreSQL whose stored balance disagrees with its entries fails the backup, naming the organisation, and leaves nothing", async () => {
  const url = await freshCopy();
  const sql = pg.connect(url, 1);
  await sql`UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ${org.orgId}`;
  const to = join(workDir, "tampered");
  const run = backup(url, to);
  expect(run.exitCode).toBe(1);
  expect(run.stderr).toContain(`organisation ${org.orgId}: credit in SQLite balance `);
  expect(run.stderr).toContain("no backup was written");
  expect(existsSync(to)).toBe(false);
  expect(existsSync(`${to}.partial`)).toBe(false);
}, 120_000);

test("ledger entries committed while the backup runs: the backup holds a prefix of them in commit order, and credits verify passes on it", async () => {
  const url = await freshCopy();
  const writer = pg.connect(url, 1);
  const to = join(workDir, "concurrent");
  const proc = Bun.spawn([requireBinary(), "backup", "--database-url", url, "--to", to, "--json"], { env: BASE_ENV, stdout: "pipe", stderr: "pipe" });
  const committed: string[] = [];
  let finished = false;
  void proc.exited.then(() => (finished = true));
  // One entry per transaction, alternating credit and debit, until the backup ends.
  for (let i = 0; !finished && i < 5_000; i++) {
    const key = `concurrent-${String(i).padStart(5, "0")}`;
    const [type, amount, purpose] = i % 2 === 0 ? ["top_up", 3, "operator_top_up"] : ["settle", -2, "search"];
    await writer`INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, ref, created_at_ms, purpose)
      VALUES (${crypto.randomUUID()}, ${org.orgId}, ${type}, ${amount}, 'GBP', ${key}, ${key}, NULL, ${Date.now()}, ${purpose})`;
    committed.push(key);
  }
  const [exitCode, stderr] = [await proc.exited, await new Response(proc.stderr).text()];
  expect(exitCode, stderr).toBe(0);
  expect(committed.length).toBeGreaterThan(0);
  const copy = openReadOnly(to);
  try {
    const held = copy.query<{ key: string }, []>("SELECT idempotency_key AS key FROM ledger_entries WHERE idempotency_key LIKE 'concurrent-%' ORDER BY rowid").all().map((r) => r.key);
    // Written both before the snapshot and after it, so the prefix is a real cut.
    expect(held.length).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(committed.length);
    expect(held).toEqual(committed.slice(0, held.length));
  } finally {
    copy.close();
  }
  const verify = runBinary(["credits", "verify", "--data-dir", to]);
  expect(verify.exitCode, verify.stderr).toBe(0);
}, 180_000);
