import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { redactDatabaseUrl } from "../db/postgres/connect";
import { requiredString } from "./args";
import { CliError } from "./args";
import { backupPostgres, describePostgresBackup } from "./backup-postgres";
import type { Command } from "./command";

export const backupCommands: Command[] = [
  {
    name: "backup",
    summary:
      "Write a consistent copy of the live database (safe while serving); with --database-url, a servable data directory from one PostgreSQL snapshot",
    usage: "regkb backup --to FILE|DIR [--database-url URL]",
    flags: { to: "string" },
    async run({ flags, config, deps }) {
      const target = resolve(requiredString(flags, "to"));
      if (config.databaseUrl !== undefined) {
        const report = await backupPostgres(config, config.databaseUrl, target);
        return { json: report, text: describePostgresBackup(redactDatabaseUrl(config.databaseUrl), report) };
      }
      if (existsSync(target)) throw new CliError(`${target} already exists; choose a new file`);
      const d = await deps();
      // VACUUM INTO reads one snapshot inside a read transaction: consistent while the server writes.
      d.db.query("VACUUM INTO ?").run(target);
      const bytes = Bun.file(target).size;
      return { json: { path: target, bytes }, text: `backup written to ${target} (${bytes} bytes)` };
    },
  },
];
