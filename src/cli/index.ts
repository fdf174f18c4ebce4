import { ConfigError, loadConfig, type Env } from "../config";
import { closeDatabases, createDeps, type Deps } from "../deps";
import { Refusal, type ErrorCode } from "../errors";
import { VERSION } from "../version";
import { CliError, optionalInteger, optionalString, parseFlags } from "./args";
import { backupCommands } from "./backup";
import { corpusCommands } from "./corpus";
import type { Command } from "./command";
import { creditCommands } from "./credits";
import { jurisdictionCommands } from "./jurisdiction";
import { keyCommands } from "./key";
import { migrateCommands } from "./migrate";
import { migrateToPostgresCommands } from "./migrate-to-postgres";
import { orgCommands } from "./org";
import { replicaCommands } from "./replica";
import { serveCommands } from "./serve";
import { userCommands } from "./user";

export const commands: Command[] = [...serveCommands, ...orgCommands, ...jurisdictionCommands, ...keyCommands, ...creditCommands, ...backupCommands, ...userCommands, ...corpusCommands, ...migrateCommands, ...migrateToPostgresCommands, ...replicaCommands];

// --database-url is common so that every command refuses it clearly (PostgresUnavailable), not as an unknown flag.
const COMMON_FLAGS = { "data-dir": "string", "database-url": "string", json: "boolean", help: "boolean" } as const;

/** The commands that work on PostgreSQL in this version; the rest say so instead of using SQLite silently. */
const POSTGRES_COMMANDS = new Set([
  "serve",
  "migrate",
  "migrate-to-postgres",
  "replica sync",
  "backup",
  "org create",
  "org list",
  "org jurisdictions",
  "key create",
  "key list",
  "key revoke",
  "jurisdiction add",
  "jurisdiction list",
  "credits top-up",
  "credits adjust",
  "credits show",
  "credits verify",
  "user create",
  "user reset-password",
  "user list",
]);

/** A database URL given to a command that cannot use PostgreSQL yet: exit status 2, not a silent fallback to SQLite. */
class PostgresUnavailable extends CliError {
  constructor() {
    super(
      "a database URL is set (REGKB_DATABASE_URL / --database-url) but this command does not work on PostgreSQL in this version (unset it to use the data directory)",
    );
  }
}

function helpText(): string {
  const width = Math.max(...commands.map((c) => c.usage.length));
  return [
    `regkb ${VERSION} — regulatory knowledge service and operator CLI`,
    "",
    "Usage:",
    ...commands.map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
    "",
    "Every command takes --data-dir DIR (default $REGKB_DATA_DIR or ./regkb-data) and --json",
    "(one JSON object as the last line of stdout). Exit status 0 on success, 1 on error.",
    "--database-url URL (default $REGKB_DATABASE_URL) names a PostgreSQL database as the system",
    `of record; these commands use it: ${[...POSTGRES_COMMANDS].map((c) => `\`regkb ${c}\``).join(", ")};`,
    "every other command refuses it (exit status 2).",
  ].join("\n");
}

/** Longest command names first, so "org create" wins over a hypothetical "org". */
function findCommand(args: readonly string[]): { command: Command; rest: string[] } | undefined {
  for (const command of [...commands].sort((a, b) => b.name.length - a.name.length)) {
    const words = command.name.split(" ");
    if (words.every((w, i) => args[i] === w)) return { command, rest: args.slice(words.length) };
  }
  return undefined;
}

export async function runCli(args: string[], env: Env): Promise<number> {
  if (args.length === 0 || args[0] === "--help" || args[0] === "help") {
    process.stdout.write(`${helpText()}\n`);
    return 0;
  }
  if (args[0] === "--version") {
    process.stdout.write(`regkb ${VERSION}\n`);
    return 0;
  }
  const found = findCommand(args);
  if (!found) {
    process.stderr.write(`regkb: unknown command "${args.slice(0, 2).join(" ")}"; see regkb --help\n`);
    return 2;
  }
  const { command, rest } = found;
  let deps: Deps | undefined;
  let json = false;
  try {
    const { flags, positionals } = parseFlags(rest, { ...COMMON_FLAGS, ...command.flags });
    json = flags.json === true;
    if (flags.help) {
      process.stdout.write(`${command.usage}\n  ${command.summary}\n`);
      return 0;
    }
    // Only commands that declare --port, --host or --init (serve) can receive them; parseFlags refuses the rest.
    const config = loadConfig(env, {
      dataDir: optionalString(flags, "data-dir"),
      databaseUrl: optionalString(flags, "database-url"),
      port: optionalInteger(flags, "port", 0, 65535),
      host: optionalString(flags, "host"),
      init: flags.init === true,
    });
    if (config.databaseUrl !== undefined && !POSTGRES_COMMANDS.has(command.name)) {
      throw new PostgresUnavailable();
    }
    const cliLogLevel = command.name === "serve" ? config.logLevel : "warn";
    const result = await command.run({
      flags,
      positionals,
      config,
      interactive: !json && process.stdout.isTTY === true,
      deps: async () => (deps ??= await createDeps({ ...config, logLevel: cliLogLevel })),
    });
    process.stdout.write(json ? `${JSON.stringify(result.json)}\n` : `${result.text}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`regkb ${command.name}: ${describe(error)}\n`);
    if (json) process.stdout.write(`${JSON.stringify({ error: errorCode(error), details: describe(error) })}\n`);
    return error instanceof PostgresUnavailable ? 2 : 1;
  } finally {
    if (deps && command.name !== "serve") {
      deps.pdf.close();
      await deps.vectorSearchPool?.close();
      await closeDatabases(deps);
    }
  }
}

function errorCode(error: unknown): ErrorCode {
  if (error instanceof Refusal) return error.code;
  if (error instanceof CliError || error instanceof ConfigError) return "invalid_arguments";
  return "internal_error";
}

function describe(error: unknown): string {
  if (error instanceof Refusal) return error.details;
  if (error instanceof Error) return error.message.split("\n")[0] ?? error.name;
  return String(error);
}
