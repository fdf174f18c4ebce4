// `regkb backup --database-url URL --to DIR`: the reverse of migrate-to-postgres. One
// PostgreSQL snapshot (REPEATABLE READ, READ ONLY) becomes a complete single-node data
// directory: a new SQLite database at the same schema version with every copied table, the
// ledger replayed through SQLite's own trigger, the PDFs under documents/, and the search
// index built from the stored vectors, so `regkb serve --data-dir DIR` can serve it at once.
// It is written into DIR.partial and renamed at the end: a failed or killed backup never
// leaves a directory that looks whole.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { existsSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { verifyLedger } from "../billing/ledger";
import type { Config } from "../config";
import { migrations as sqliteMigrations } from "../db/migrations";
import { openDatabase } from "../db/open";
import { openPostgres, redactDatabaseUrl } from "../db/postgres/connect";
import { BATCH_ROWS_MAX, COPIED_TABLES, copyTableToSqlite } from "../db/postgres/copy-tables";
import { checkLedgerCopy, type LedgerCopyFigures } from "../db/postgres/ledger-check";
import { documentPath, storeDocumentFile } from "../documents/files";
import { createLogger } from "../log";
import { createEmbedder } from "../search/embedder/index";
import { putStoredPassages } from "../search/indexing";
import { maintainSearchIndex, type MaintenanceDeps, type MaintenanceReport } from "../search/maintenance";
import { storedPassage } from "../search/replica/follower";
import { passagesAfter, postgresEmbedder } from "../search/replica/postgres-passages";
import { SearchIndex } from "../search/search-index";
import { CliError } from "./args";
import { verificationResult } from "./credits";

export interface PostgresBackupReport {
  to: string;
  schemaVersion: number;
  /** Rows written per table (document_files: PDFs written to documents/). */
  rows: Record<string, number>;
  pdfBytes: number;
  /** Checked equal to PostgreSQL's credit_balances for every organisation. */
  ledger: LedgerCopyFigures;
  maintenance: MaintenanceReport;
  seconds: number;
}

/** Not copied row by row: the passages are indexed (below) and the index's meta is the node's own. */
const INDEXED_TABLES = new Set(["search_chunks", "search_chunk_vectors", "search_index_meta"]);

function refuseExisting(to: string): void {
  if (!existsSync(to)) return;
  if (!statSync(to).isDirectory() || readdirSync(to).length > 0) {
    throw new CliError(`${to} already exists and is not an empty directory: back up into a new (or empty) directory`);
  }
}

async function postgresVersion(tx: SQL): Promise<number> {
  const [{ present }] = await tx`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`;
  if (!present) throw new Error("the PostgreSQL database has no regkb schema (schema_migrations is missing): nothing to back up");
  const [{ version }] = await tx`SELECT max(version) AS version FROM schema_migrations`;
  return Number(version);
}

/** The index is built from PostgreSQL's vectors as they are: they must be this binary's configured embedder's. */
async function refuseOtherEmbedder(tx: SQL, index: SearchIndex): Promise<void> {
  const stored = await postgresEmbedder(tx);
  const [{ any }] = await tx`SELECT EXISTS (SELECT 1 FROM search_chunks) AS any`;
  if (stored === undefined && !any) return;
  const { embedder } = index;
  if (stored?.embedderId !== embedder.id || stored.dimensions !== embedder.dimensions) {
    throw new Error(
      `PostgreSQL's passage vectors were made by embedder ${stored ? `${stored.embedderId} (${stored.dimensions}-d)` : "(none recorded)"} but this ` +
        `binary is configured with ${embedder.id} (${embedder.dimensions}-d): run the backup with the embedder the nodes use (REGKB_EMBEDDER)`,
    );
  }
}

/** Each document's PDF from document_files, one at a time, checked against its recorded size and SHA-256. */
async function writeDocumentFiles(tx: SQL, db: Database, dir: string): Promise<{ files: number; bytes: number }> {
  const documents = db.query<{ id: string; orgId: string; sizeBytes: number; sha256: string }, []>(
    "SELECT id, org_id AS orgId, size_bytes AS sizeBytes, sha256 FROM documents ORDER BY id",
  );
  let files = 0;
  let bytes = 0;
  try {
    for (const doc of documents.iterate()) {
      const [row] = await tx`SELECT pdf FROM document_files WHERE document_id = ${doc.id}`;
      if (row === undefined) throw new Error(`document ${doc.id} of organisation ${doc.orgId} has no PDF in document_files`);
      const pdf = row.pdf as Uint8Array;
      const sha256 = new Bun.CryptoHasher("sha256").update(pdf).digest("hex");
      if (pdf.byteLength !== doc.sizeBytes || sha256 !== doc.sha256) {
        throw new Error(`document ${doc.id} of organisation ${doc.orgId}: its PDF in document_files is not the one uploaded (size or SHA-256 differs)`);
      }
      await storeDocumentFile(documentPath(dir, doc.orgId, doc.id), pdf);
      files++;
      bytes += pdf.byteLength;
    }
  } finally {
    documents.finalize();
  }
  return { files, bytes };
}

/** Every passage with its stored vector, in id order, batch by batch, through the same indexing as a replica. */
async function indexPassages(tx: SQL, index: SearchIndex, batchRowsMax: number): Promise<number> {
  let indexed = 0;
  for (let afterId = 0; ; ) {
    const batch = await passagesAfter(tx, afterId, batchRowsMax);
    if (batch.length === 0) return indexed;
    const withVectors = batch.map((p) => {
      if (p.vector === undefined) throw new Error(`passage ${p.id} has no vector in search_chunk_vectors`);
      return storedPassage({ ...p, vector: p.vector });
    });
    putStoredPassages(index, withVectors, []);
    indexed += batch.length;
    afterId = batch.at(-1)!.id;
  }
}

async function copySnapshot(tx: SQL, db: Database, index: SearchIndex, dir: string) {
  const schemaVersion = await postgresVersion(tx);
  const known = Math.max(...sqliteMigrations.map((m) => m.version));
  if (schemaVersion !== known) {
    throw new Error(`the PostgreSQL database is at schema version ${schemaVersion}, this binary's at ${known}: back it up with the regkb that serves it`);
  }
  await refuseOtherEmbedder(tx, index);
  const rows: Record<string, number> = {};
  let pdfBytes = 0;
  for (const plan of COPIED_TABLES) {
    if (INDEXED_TABLES.has(plan.table)) continue;
    rows[plan.table] = await copyTableToSqlite(tx, db, plan);
    if (plan.table === "documents") {
      const files = await writeDocumentFiles(tx, db, dir);
      rows.document_files = files.files;
      pdfBytes = files.bytes;
    }
  }
  rows.search_chunks = rows.search_chunk_vectors = await indexPassages(tx, index, BATCH_ROWS_MAX);
  // SQLite's trigger rebuilt every balance from the entries: it must arrive at PostgreSQL's.
  const ledger = await checkLedgerCopy(db, tx);
  return { schemaVersion, rows, pdfBytes, ledger };
}

export async function backupPostgres(config: Config, url: string, to: string): Promise<PostgresBackupReport> {
  refuseExisting(to);
  const partial = `${to}.partial`;
  if (existsSync(partial)) throw new CliError(`${partial} exists: a backup into it is running or was interrupted; remove it, then run this again`);
  const startedMs = performance.now();
  const where = redactDatabaseUrl(url);
  const sql = openPostgres({ url, poolSize: 1 });
  let db: Database | undefined;
  try {
    db = await openDatabase(partial, "full", { init: true });
    const index = new SearchIndex(db, await createEmbedder(config.embedder));
    const maintenanceDeps: MaintenanceDeps = { searchIndex: index, config, log: createLogger("warn") };
    // An empty index adopts the embedder before passages go in; afterwards it is clustered as after `regkb corpus import`.
    await maintainSearchIndex(maintenanceDeps);
    const target = db;
    const copied = await sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", (tx) => copySnapshot(tx, target, index, partial));
    verificationResult(verifyLedger(db));
    const maintenance = await maintainSearchIndex(maintenanceDeps);
    db.close();
    db = undefined;
    renameSync(partial, to);
    return { to, ...copied, maintenance, seconds: Math.round(performance.now() - startedMs) / 1000 };
  } catch (error) {
    db?.close();
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`PostgreSQL at ${where} → ${to}: ${(error as Error).message}; no backup was written`);
  } finally {
    await sql.close();
  }
}

export function describePostgresBackup(where: string, report: PostgresBackupReport): string {
  const width = Math.max(...Object.keys(report.rows).map((t) => t.length));
  const { ledger } = report;
  return [
    `backed up PostgreSQL at ${where} (one snapshot, schema version ${report.schemaVersion}) into ${report.to} in ${report.seconds} s`,
    ...Object.entries(report.rows).map(([table, n]) => `  ${table.padEnd(width)}  ${n}`),
    `  PDF bytes: ${report.pdfBytes}`,
    `ledger replayed and checked against PostgreSQL: ${ledger.organisations} organisations, ${ledger.entries} entries, ` +
      `balances ${ledger.balancePence}p, held ${ledger.heldPence}p; every organisation's balance, hold, entry count and sum per type equal; credits verify passes`,
    ...(report.maintenance.clustered === undefined
      ? []
      : [`search index: ${report.maintenance.clustered.vectors} vectors clustered into ${report.maintenance.clustered.clusters} clusters`]),
    `serve it with: regkb serve --data-dir ${report.to}`,
  ].join("\n");
}
