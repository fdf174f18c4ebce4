import { Database } from "bun:sqlite";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { verifyLedgerIn } from "../billing/verify-postgres";
import { databasePath } from "../db/open";
import { openPostgres, redactDatabaseUrl } from "../db/postgres/connect";
import { copyInstallation, type CopyReport } from "../db/postgres/copy-installation";
import { documentPath } from "../documents/files";
import { CliError, requiredString } from "./args";
import { lockDataDir } from "./data-dir";
import type { Command } from "./command";
import { verificationResult } from "./credits";

export const migrateToPostgresCommands: Command[] = [
  {
    name: "migrate-to-postgres",
    summary:
      "Copy a single-node installation (its SQLite database and documents/) into an empty PostgreSQL database, in one transaction checked against the source's ledger",
    usage: "regkb migrate-to-postgres --from DATA_DIR --database-url URL",
    flags: { from: "string" },
    async run({ flags, config }) {
      const dataDir = resolve(requiredString(flags, "from"));
      if (config.databaseUrl === undefined) throw new CliError("--database-url (or REGKB_DATABASE_URL) is required: the PostgreSQL database to copy into");
      const file = databasePath(dataDir);
      if (!existsSync(file) || statSync(file).size === 0) throw new CliError(`${file} does not exist or is empty: --from names a regkb data directory`);
      // Refused while `regkb serve` runs on it, and no server starts on it until the copy ends:
      // whatever it wrote after the snapshot would not be copied.
      const lock = lockDataDir(dataDir);
      const startedMs = performance.now();
      const where = redactDatabaseUrl(config.databaseUrl);
      const source = new Database(file, { readonly: true, strict: true });
      const target = openPostgres({ url: config.databaseUrl, poolSize: 1 });
      try {
        const report = await copyInstallation(
          {
            db: source,
            readDocumentPdf: async (orgId, documentId) => {
              const pdf = Bun.file(documentPath(dataDir, orgId, documentId));
              return (await pdf.exists()) ? pdf.bytes() : null;
            },
          },
          target,
          // The copy commits only if `credits verify` passes on it too.
          { verify: async (tx) => void verificationResult(await verifyLedgerIn(tx)) },
        ).catch((error: unknown) => {
          throw new Error(`${dataDir} → PostgreSQL at ${where}: ${(error as Error).message}; nothing was copied`);
        });
        const seconds = Math.round(performance.now() - startedMs) / 1000;
        return { json: { from: dataDir, ...report, seconds }, text: describeCopy(dataDir, where, report, seconds) };
      } finally {
        source.close();
        await target.close();
        lock.release();
      }
    },
  },
];

function describeCopy(dataDir: string, where: string, report: CopyReport, seconds: number): string {
  const width = Math.max(...Object.keys(report.rows).map((t) => t.length));
  const { ledger } = report;
  return [
    `copied ${dataDir} into PostgreSQL at ${where} (schema version ${report.schemaVersion}) in ${seconds} s` +
      (report.migrationsApplied.length > 0 ? `; migrations applied first: ${report.migrationsApplied.join(", ")}` : ""),
    ...Object.entries(report.rows).map(([table, n]) => `  ${table.padEnd(width)}  ${n}`),
    `  PDF bytes: ${report.pdfBytes}; passage changes logged: ${report.passageChanges} (one insert per passage, in id order)`,
    `ledger checked against the source: ${ledger.organisations} organisations, ${ledger.entries} entries, ` +
      `balances ${ledger.balancePence}p, held ${ledger.heldPence}p; every organisation's balance, hold, entry count and sum per type equal; credits verify passes`,
  ].join("\n");
}
