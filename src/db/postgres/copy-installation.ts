// `regkb migrate-to-postgres`: a single node's SQLite database and its documents' PDFs copied
// into an empty PostgreSQL database at the same schema version, in one PostgreSQL
// transaction (any failure leaves the target empty), read from one SQLite snapshot.
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { migrations as sqliteMigrations } from "../migrations";
import { COPIED_TABLES, copyTable } from "./copy-tables";
import { checkLedgerCopy, type LedgerCopyFigures } from "./ledger-check";
import { MIGRATION_LOCK_KEY, migratePostgres } from "./migrate";

export interface CopySource {
  /** The installation's database, opened read-only. */
  db: Database;
  /** The stored PDF of a document, or null when the file is missing. */
  readDocumentPdf(orgId: string, documentId: string): Promise<Uint8Array | null>;
}

export interface CopyReport {
  schemaVersion: number;
  /** PostgreSQL migrations this run applied to an empty target first. */
  migrationsApplied: number[];
  /** Rows copied per table. */
  rows: Record<string, number>;
  pdfBytes: number;
  /** passage_changes rows written: one insert per passage, in id order. */
  passageChanges: number;
  ledger: LedgerCopyFigures;
}

/** A copy that must not start or must not commit; the message says what to do. */
export class CopyRefused extends Error {
  override name = "CopyRefused";
}

export interface CopyOptions {
  batchRowsMax?: number;
  /** Runs last inside the copy's transaction; a throw rolls everything back (credits verify on the copy). */
  verify?: (tx: SQL) => Promise<void>;
}

/** Tables with an identity column whose values were copied: their sequences continue after the largest. */
const IDENTITY_COLUMNS = [
  ["search_chunks", "id"],
  ["login_attempts", "id"],
] as const;

function sqliteVersion(db: Database): number {
  const row = db.query<{ version: number | null }, []>("SELECT max(version) AS version FROM schema_migrations").get();
  return row?.version ?? 0;
}

async function postgresVersion(sql: SQL): Promise<number | undefined> {
  const [{ present }] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`;
  if (!present) return undefined;
  const [{ version }] = await sql`SELECT max(version) AS version FROM schema_migrations`;
  return version ?? undefined;
}

/** The target at the source's version, migrating it first when it has no schema at all. */
async function prepareTarget(target: SQL, version: number): Promise<number[]> {
  const found = await postgresVersion(target);
  const applied = found === undefined ? await migratePostgres(target) : [];
  const now = found ?? (await postgresVersion(target));
  if (now !== version) {
    throw new CopyRefused(
      `the PostgreSQL database is at schema version ${now}, the installation at ${version}: ` +
        "copy into a new, empty database, or bring both to the same version with this binary's `regkb migrate`",
    );
  }
  return applied;
}

async function refuseNonEmpty(tx: SQL): Promise<void> {
  for (const table of ["organisations", ...COPIED_TABLES.map((t) => t.table)]) {
    const [{ used }] = await tx`SELECT EXISTS (SELECT 1 FROM ${tx(table)}) AS used`;
    if (used) {
      throw new CopyRefused(
        `the PostgreSQL database already holds data (${table} is not empty): migrate-to-postgres only copies into an empty ` +
          "database: create a new one (createdb) and run this again with its URL",
      );
    }
  }
}

/** Each document's PDF from the documents/ folder, one at a time, checked against its recorded size and SHA-256. */
async function copyDocumentFiles(source: CopySource, tx: SQL): Promise<{ files: number; bytes: number }> {
  const documents = source.db.query<{ id: string; orgId: string; sizeBytes: number; sha256: string }, []>(
    "SELECT id, org_id AS orgId, size_bytes AS sizeBytes, sha256 FROM documents ORDER BY rowid",
  );
  let files = 0;
  let bytes = 0;
  try {
    for (const doc of documents.iterate()) {
      const pdf = await source.readDocumentPdf(doc.orgId, doc.id);
      if (pdf === null) throw new CopyRefused(`document ${doc.id} of organisation ${doc.orgId}: its PDF is missing from documents/`);
      const sha256 = new Bun.CryptoHasher("sha256").update(pdf).digest("hex");
      if (pdf.byteLength !== doc.sizeBytes || sha256 !== doc.sha256) {
        throw new CopyRefused(`document ${doc.id} of organisation ${doc.orgId}: its PDF in documents/ is not the one uploaded (size or SHA-256 differs)`);
      }
      await tx`INSERT INTO document_files (document_id, pdf) VALUES (${doc.id}, ${pdf})`;
      files++;
      bytes += pdf.byteLength;
    }
  } finally {
    documents.finalize();
  }
  return { files, bytes };
}

async function copyRows(source: CopySource, tx: SQL, batchRowsMax: number | undefined): Promise<{ rows: Record<string, number>; pdfBytes: number }> {
  const rows: Record<string, number> = {};
  let pdfBytes = 0;
  for (const plan of COPIED_TABLES) {
    rows[plan.table] = await copyTable(source.db, tx, plan, batchRowsMax);
    if (plan.table === "documents") {
      const files = await copyDocumentFiles(source, tx);
      rows.document_files = files.files;
      pdfBytes = files.bytes;
    }
  }
  return { rows, pdfBytes };
}

async function continueIdentities(tx: SQL): Promise<void> {
  for (const [table, column] of IDENTITY_COLUMNS) {
    await tx.unsafe(`SELECT setval(pg_get_serial_sequence('${table}', '${column}'), max(${column})) FROM ${table} HAVING count(*) > 0`);
  }
}

export async function copyInstallation(source: CopySource, target: SQL, options: CopyOptions = {}): Promise<CopyReport> {
  // One read transaction: every table and the ledger check see the same snapshot.
  source.db.exec("BEGIN");
  try {
    const version = sqliteVersion(source.db);
    const known = Math.max(...sqliteMigrations.map((m) => m.version));
    if (version !== known) {
      throw new CopyRefused(
        version < known
          ? `the installation's database is at schema version ${version}, this binary's at ${known}: run \`regkb migrate --data-dir DIR\` on it first (with its server stopped)`
          : `the installation's database is at schema version ${version}, newer than this binary knows (${known}): use the regkb it runs`,
      );
    }
    const migrationsApplied = await prepareTarget(target, version);
    return await target.begin(async (tx) => {
      // Taken by `regkb migrate` too: a migration or a second copy waits for this one to commit.
      await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
      await refuseNonEmpty(tx);
      // The passages' own trigger logs one insert per passage; their vectors' would log a second.
      await tx`ALTER TABLE search_chunk_vectors DISABLE TRIGGER search_chunk_vectors_changes`;
      const { rows, pdfBytes } = await copyRows(source, tx, options.batchRowsMax);
      await tx`ALTER TABLE search_chunk_vectors ENABLE TRIGGER search_chunk_vectors_changes`;
      const ledger = await checkLedgerCopy(source.db, tx);
      await options.verify?.(tx);
      await continueIdentities(tx);
      const [{ changes }] = await tx`SELECT count(*)::float8 AS changes FROM passage_changes`;
      return { schemaVersion: version, migrationsApplied, rows, pdfBytes, passageChanges: changes, ledger };
    });
  } finally {
    source.db.exec("COMMIT");
  }
}
