// `regkb migrate-to-postgres` through the compiled binary: an installation built by the real
// services (sample corpus, an organisation with a key, top-ups, charged searches,
// screenings, an ingested and a deleted PDF, a dashboard user) copied into PostgreSQL row for
// row, byte for byte, with its ledger replayed to the same balances; a second run, a target
// at another version and a tampered source are refused and leave the target as it was.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { cpSync, rmSync } from "node:fs";
import { join } from "node:path";
import { COPIED_TABLES } from "../../src/db/postgres/copy-tables";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { postgresMigrations } from "../../src/db/postgres/migrations";
import { REAL_PDF_DIR } from "../documents/real-pdfs";
import { runBinary } from "../helpers/binary";
import { buildInstallation, columnsOf, KEPT_PDF, normaliseRows, postgresRows } from "../helpers/installation";
import { usePostgres } from "../helpers/postgres";
import { tempDir, type TestOrg } from "../helpers/server";

const pg = usePostgres();
const dataDir = tempDir("regkb-migrate-source-");
let org: TestOrg;

beforeAll(async () => {
  org = await buildInstallation(dataDir);
}, 120_000);

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function migrate(from: string, url: string) {
  return runBinary(["migrate-to-postgres", "--from", from, "--database-url", url, "--json"]);
}

async function tableCounts(sql: SQL): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of [...COPIED_TABLES.map((t) => t.table), "document_files", "credit_balances", "passage_changes"]) {
    const [{ n }] = await sql.unsafe(`SELECT count(*)::int AS n FROM "${table}"`);
    counts[table] = n;
  }
  return counts;
}

test("everything is copied: same rows field by field, same PDF bytes and vectors, same balances; credits verify passes on PostgreSQL", async () => {
  const run = migrate(dataDir, pg.url);
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout + run.stderr).not.toContain(decodeURIComponent(new URL(pg.url).password));
  const source = new Database(join(dataDir, "regkb.sqlite"), { readonly: true, strict: true });
  try {
    for (const plan of COPIED_TABLES) {
      const { table, where } = plan;
      const columns = await columnsOf(pg.sql, plan);
      const sqlite = normaliseRows(source.query<Record<string, unknown>, []>(`SELECT ${columns.map((c) => `"${c}"`).join(", ")} FROM "${table}"${where ? ` WHERE ${where}` : ""}`).all());
      expect(run.json.rows[table]).toBe(sqlite.length);
      expect(await postgresRows(pg.sql, table, columns), table).toEqual(sqlite);
    }
    const counts = await tableCounts(pg.sql);
    // What the installation held: enough of each kind for the comparison above to mean something.
    expect(counts.organisations).toBe(2);
    expect(counts.search_chunks).toBeGreaterThan(800);
    expect(counts.search_chunk_vectors).toBe(counts.search_chunks);
    expect(counts.documents).toBe(1);
    for (const table of ["api_keys", "users", "dashboard_sessions", "login_attempts", "idempotency_keys", "runs", "run_turns"]) {
      expect(counts[table], table).toBeGreaterThan(0);
    }
    const kinds = source.query<{ type: string }, []>("SELECT DISTINCT type FROM ledger_entries ORDER BY type").all().map((r) => r.type);
    expect(kinds).toEqual(["release", "reserve", "settle", "top_up"]);

    const [file] = await pg.sql`SELECT d.filename, f.pdf FROM document_files f JOIN documents d ON d.id = f.document_id`;
    const original = await Bun.file(join(REAL_PDF_DIR, KEPT_PDF.file)).bytes();
    expect(file.filename).toBe(KEPT_PDF.file);
    expect(Buffer.from(file.pdf).equals(Buffer.from(original))).toBe(true);
    expect(run.json.pdfBytes).toBe(original.byteLength);

    const balances = source.query<{ org_id: string; balance_pence: number; held_pence: number }, []>("SELECT * FROM credit_balances").all();
    expect(normaliseRows(await pg.sql`SELECT org_id, balance_pence, held_pence FROM credit_balances`)).toEqual(normaliseRows(balances));

    // One insert per passage, in id order: a node replaying the log loads every passage once.
    const changes: { op: string; chunkId: number }[] = await pg.sql`SELECT op, chunk_id::int AS "chunkId" FROM passage_changes ORDER BY seq`;
    const ids = source.query<{ id: number }, []>("SELECT id FROM search_chunks ORDER BY id").all().map((r) => r.id);
    expect(changes).toEqual(ids.map((chunkId) => ({ op: "insert", chunkId })));
    expect(run.json.passageChanges).toBe(ids.length);
    // A passage written later gets the next id, not one that was copied.
    const [{ next }] = await pg.sql`SELECT nextval(pg_get_serial_sequence('search_chunks', 'id'))::int AS next`;
    expect(next).toBe(ids.at(-1)! + 1);
  } finally {
    source.close();
  }

  const verify = runBinary(["credits", "verify", "--database-url", pg.url, "--json"]);
  expect(verify.exitCode, verify.stderr).toBe(0);
  expect(verify.json).toEqual({ organisations: 2, entries: run.json.ledger.entries, mismatches: [], holdProblems: [], ok: true });
  const onSqlite = runBinary(["credits", "verify", "--data-dir", dataDir]);
  expect(runBinary(["credits", "verify", "--database-url", pg.url]).stdout).toBe(onSqlite.stdout);
}, 120_000);

test("a second run into the same database is refused and changes nothing", async () => {
  const before = await tableCounts(pg.sql);
  const again = migrate(dataDir, pg.url);
  expect(again.exitCode).toBe(1);
  expect(again.stderr).toContain("the PostgreSQL database already holds data (organisations is not empty)");
  expect(again.stderr).toContain("nothing was copied");
  expect(await tableCounts(pg.sql)).toEqual(before);
}, 60_000);

test("a target at another schema version is refused before anything is copied", async () => {
  const url = await pg.createDatabase();
  const sql = pg.connect(url, 1);
  await migratePostgres(sql, postgresMigrations.slice(0, -1));
  const run = migrate(dataDir, url);
  expect(run.exitCode).toBe(1);
  const [older, newest] = postgresMigrations.slice(-2).map((m) => m.version);
  expect(run.stderr).toContain(`the PostgreSQL database is at schema version ${older}, the installation at ${newest}`);
  const [{ n }] = await sql`SELECT count(*)::int AS n FROM jurisdictions`;
  expect(n).toBe(0);
}, 60_000);

test("a source whose stored balance disagrees with its entries rolls the whole copy back, naming the organisation", async () => {
  const tampered = tempDir("regkb-migrate-tampered-");
  try {
    cpSync(dataDir, tampered, { recursive: true });
    const db = new Database(join(tampered, "regkb.sqlite"), { strict: true });
    db.query("UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ?").run(org.orgId);
    db.close();
    const url = await pg.createDatabase();
    const run = migrate(tampered, url);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain(`the copied ledger differs from the source (1 differences): organisation ${org.orgId}: credit in SQLite balance `);
    expect(run.json.error).toBe("internal_error");
    const counts = await tableCounts(pg.connect(url, 1));
    expect(Object.entries(counts).filter(([, n]) => n > 0)).toEqual([]);
  } finally {
    rmSync(tampered, { recursive: true, force: true });
  }
}, 60_000);

test("credits verify finds the same problems on PostgreSQL as on SQLite, in the same words and with the same exit status", async () => {
  const copy = tempDir("regkb-verify-parity-");
  try {
    cpSync(dataDir, copy, { recursive: true });
    const url = await pg.createDatabase();
    expect(migrate(copy, url).exitCode).toBe(0);
    // The same two faults on both engines: a stored balance off by a penny, and a run's settle without its hold.
    const settle = [crypto.randomUUID(), org.orgId, "settle", -1, "GBP", "orphan settle", "settle:run-orphan", "run-orphan", 1_700_000_000_000, "run_settle"];
    const insert = "INSERT INTO ledger_entries (id, org_id, type, amount_pence, currency, description, idempotency_key, ref, created_at_ms, purpose) VALUES";
    const db = new Database(join(copy, "regkb.sqlite"), { strict: true });
    db.query(`${insert} (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(...(settle as [string]));
    db.query("UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ?").run(org.orgId);
    db.close();
    const sql = pg.connect(url, 1);
    await sql.unsafe(`${insert} ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, settle);
    await sql`UPDATE credit_balances SET balance_pence = balance_pence + 1 WHERE org_id = ${org.orgId}`;
    const [onSqlite, onPostgres] = [runBinary(["credits", "verify", "--data-dir", copy]), runBinary(["credits", "verify", "--database-url", url])];
    expect(onSqlite.exitCode).toBe(1);
    expect(onSqlite.stderr).toContain(`organisation ${org.orgId}: stored balance`);
    expect(onSqlite.stderr).toContain("run run-orphan: release or settle without exactly one reserve");
    expect(onPostgres.exitCode).toBe(1);
    expect(onPostgres.stderr).toBe(onSqlite.stderr);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}, 60_000);
