import { openDatabaseMigrated } from "../db/open";
import { migrations as sqliteMigrations } from "../db/migrations";
import { openPostgres, redactDatabaseUrl } from "../db/postgres/connect";
import { migratePostgres } from "../db/postgres/migrate";
import { postgresMigrations } from "../db/postgres/migrations";
import type { Config } from "../config";
import type { Command, CommandResult } from "./command";

export const migrateCommands: Command[] = [
  {
    name: "migrate",
    summary: "Apply pending schema migrations to PostgreSQL (--database-url) or else the data directory's SQLite database; prints the versions applied",
    usage: "regkb migrate [--database-url URL]",
    flags: {},
    async run({ config }) {
      return config.databaseUrl === undefined ? migrateSqlite(config) : migrateToPostgres(config, config.databaseUrl);
    },
  },
];

function result(engine: "postgres" | "sqlite", where: string, applied: number[], version: number): CommandResult {
  const text =
    applied.length === 0
      ? `${where}: schema already at version ${version}; nothing to apply`
      : `${where}: applied ${applied.join(", ")}; schema at version ${version}`;
  return { json: { engine, applied, version }, text };
}

async function migrateSqlite(config: Config): Promise<CommandResult> {
  const { db, applied } = await openDatabaseMigrated(config.dataDir, config.sqliteSynchronous);
  db.close();
  return result("sqlite", config.dataDir, applied, Math.max(...sqliteMigrations.map((m) => m.version)));
}

async function migrateToPostgres(config: Config, url: string): Promise<CommandResult> {
  const where = redactDatabaseUrl(url);
  // One connection: migrations run one after another, and a migrating process should not hold a pool.
  const sql = openPostgres({ url, poolSize: 1 });
  try {
    const applied = await migratePostgres(sql).catch((error: unknown) => {
      throw new Error(`PostgreSQL at ${where}: ${(error as Error).message}`);
    });
    return result("postgres", where, applied, Math.max(...postgresMigrations.map((m) => m.version)));
  } finally {
    await sql.close();
  }
}
