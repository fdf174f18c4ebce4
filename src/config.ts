import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { SynchronousMode } from "./db/open";
import { STATEMENT_TIMEOUT_MS_DEFAULT } from "./db/postgres/sync/handle";
import type { LogLevel } from "./log";
import { embedderConfigFromEnv, type EmbedderConfig } from "./embedder-settings";

/**
 * Every setting in one place: env var, default and bounds. Flags given on the command
 * line (`--data-dir`, `--port`, `--host`, `--init`) override the environment, and
 * everything derived from them (the default public URL) is derived after they apply.
 */
export interface Config {
  dataDir: string;
  /**
   * PostgreSQL URL (`--database-url`) for the system of record; undefined = the embedded
   * SQLite database in dataDir (which then holds the search index only).
   */
  databaseUrl: string | undefined;
  /** With PostgreSQL: the server cancels any statement, and any wait for a lock, after this long. */
  databaseStatementTimeoutMs: number;
  /**
   * `--init` only (no env var, so it cannot stay set by accident): start a new database even
   * though the data directory already holds another install's documents or cache.
   */
  initDatabase: boolean;
  host: string;
  port: number;
  logLevel: LogLevel;
  /** SQLite durability: `full` (default) survives power loss; `normal` only process crashes, but commits faster. */
  sqliteSynchronous: SynchronousMode;
  /** Requests per minute per API key; 0 turns the limiter off. */
  rateLimitPerMinute: number;
  maxUploadBytes: number;
  /** Deadline for parsing one PDF (page count at upload, text at ingestion); past it the parser child is killed. */
  pdfParseTimeoutMs: number;
  /** PDF parser child processes alive at once (each ~80 MB plus the PDF being parsed). */
  pdfParsersMax: number;
  /** Parser children a serving process starts with and keeps alive when idle (≤ pdfParsersMax), so no document waits for one to start. */
  pdfParsersWarm: number;
  /**
   * Memory one PDF parse may take beyond the idle parser child, the file included; past it
   * (or when the PDF's streams decode to more than a quarter of it) the PDF is refused.
   */
  pdfMemoryBytes: number;
  /** Uploads per organisation and hour that may fail on their content before uploads get 429; 0 = no limit. */
  documentFailuresPerHour: number;
  /** Base URL customers reach (checkout success/cancel pages, dashboard links). */
  publicUrl: string;
  stripeSecretKey: string | undefined;
  stripeWebhookSecret: string | undefined;
  stripeApiBase: string | undefined;
  /** REGKB_EMBEDDER and, for `openai`, its URL, model, key, dimensions, timeout and batch size. */
  embedder: EmbedderConfig;
  sandboxPoolSize: number;
  /** Threads that run searches, each with its own connection and in-memory vectors; 0 = none (the request's thread). */
  searchWorkers: number;
  sandboxUnsafeNoIsolation: boolean;
  /**
   * Memory one execution may use beyond an idle sandbox: Python's wasm memory maximum, the
   * child's rlimits and the resident size the parent allows. Past it: MemoryError, or exit 137.
   */
  executionMemoryBytes: number;
  screeningConcurrency: number;
  ingestConcurrency: number;
  executionConcurrency: number;
  /**
   * Runs of one kind one organisation may have in progress at once, across every worker;
   * 0 = no cap beyond the kind's concurrency. Claims are fair between organisations either way.
   */
  runsPerOrganisationMax: number;
  /**
   * A node on PostgreSQL (`serve`, `replica sync --follow`): the longest wait between two reads
   * of PostgreSQL's passage change log (a change's notification usually wakes the node sooner).
   */
  replicaPollMs: number;
  /** Changes a replica applies per batch: one PostgreSQL read and one SQLite transaction each. */
  replicaBatchChanges: number;
  /** A run whose worker stops renewing its lease for this long is taken over. */
  runLeaseMs: number;
  runMaxAttempts: number;
  shutdownTimeoutMs: number;
  /**
   * TEST HOOK, never set in production: a pause before each screening keyword, so a test
   * can catch a screening mid-run (crash recovery). 0 = off.
   */
  testHookScreeningKeywordDelayMs: number;
}

export type Env = Record<string, string | undefined>;

export interface Flags {
  dataDir?: string;
  databaseUrl?: string;
  host?: string;
  port?: number;
  init?: boolean;
}

export class ConfigError extends Error {}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(", ")}`);
  return raw as T;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

function url(env: Env, name: string, fallback: string | undefined): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  try {
    const parsed = new URL(raw);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL`);
  }
  return raw.replace(/\/+$/, "");
}

const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** A postgres:// URL with a host; the message never repeats the value (it holds a password). */
function databaseUrl(env: Env, flag: string | undefined): string | undefined {
  const raw = flag ?? optional(env, "REGKB_DATABASE_URL");
  if (raw === undefined || raw === "") return undefined;
  const problem = new ConfigError(
    "REGKB_DATABASE_URL (--database-url) must be a postgres://USER:PASSWORD@HOST:PORT/DATABASE URL " +
      `(sslmode, if given, one of ${SSL_MODES.join(", ")})`,
  );
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw problem;
  }
  const sslmode = parsed.searchParams.get("sslmode");
  if ((parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") || parsed.hostname === "") throw problem;
  if (sslmode !== null && !SSL_MODES.includes(sslmode)) throw problem;
  return raw;
}

const MIB = 1024 * 1024;

function embedderConfig(env: Env): EmbedderConfig {
  try {
    return embedderConfigFromEnv(env);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

/** A PostgreSQL bytea value holds at most 1 GB (2^30 − 1 bytes): a PDF kept in document_files must fit. */
const POSTGRES_UPLOAD_BYTES_MAX = 1024 * MIB - 1;

export function loadConfig(env: Env, flags: Flags = {}): Config {
  const host = flags.host ?? optional(env, "REGKB_HOST") ?? "127.0.0.1";
  const port = flags.port ?? integer(env, "REGKB_PORT", 8080, 0, 65535);
  const postgresUrl = databaseUrl(env, flags.databaseUrl);
  return {
    dataDir: resolve(flags.dataDir ?? optional(env, "REGKB_DATA_DIR") ?? "regkb-data"),
    databaseUrl: postgresUrl,
    initDatabase: flags.init === true,
    host,
    port,
    logLevel: oneOf(env, "REGKB_LOG_LEVEL", "info", ["info", "warn", "error", "silent"] as const),
    sqliteSynchronous: oneOf(env, "REGKB_SQLITE_SYNCHRONOUS", "full", ["full", "normal"] as const),
    rateLimitPerMinute: integer(env, "REGKB_RATE_LIMIT_PER_MINUTE", 0, 0, 1_000_000),
    maxUploadBytes: integer(env, "REGKB_MAX_UPLOAD_BYTES", 50 * MIB, 1024, postgresUrl === undefined ? 1024 * MIB : POSTGRES_UPLOAD_BYTES_MAX),
    pdfParseTimeoutMs: integer(env, "REGKB_PDF_PARSE_TIMEOUT_MS", 60_000, 100, 600_000),
    pdfParsersMax: integer(env, "REGKB_PDF_PARSERS", 2, 1, 16),
    pdfParsersWarm: integer(env, "REGKB_PDF_PARSERS_WARM", 1, 0, 16),
    pdfMemoryBytes: integer(env, "REGKB_PDF_MEMORY_MB", 512, 64, 65_536) * MIB,
    documentFailuresPerHour: integer(env, "REGKB_DOCUMENT_FAILURES_PER_HOUR", 10, 0, 1_000_000),
    publicUrl: url(env, "REGKB_PUBLIC_URL", `http://${host.includes(":") ? `[${host}]` : host}:${port}`)!,
    stripeSecretKey: optional(env, "REGKB_STRIPE_SECRET_KEY"),
    stripeWebhookSecret: optional(env, "REGKB_STRIPE_WEBHOOK_SECRET"),
    stripeApiBase: url(env, "REGKB_STRIPE_API_BASE", undefined),
    embedder: embedderConfig(env),
    sandboxPoolSize: integer(env, "REGKB_SANDBOX_POOL_SIZE", 2, 0, 64),
    searchWorkers: integer(env, "REGKB_SEARCH_WORKERS", Math.min(4, availableParallelism()), 0, 64),
    sandboxUnsafeNoIsolation: optional(env, "REGKB_SANDBOX_UNSAFE_NO_ISOLATION") === "1",
    // wasm32 addresses 4 GiB at most; below 128 MiB Python's own start-up heap barely fits.
    executionMemoryBytes: integer(env, "REGKB_EXECUTION_MEMORY_MB", 512, 128, 4096) * MIB,
    screeningConcurrency: integer(env, "REGKB_SCREENING_CONCURRENCY", 2, 1, 64),
    ingestConcurrency: integer(env, "REGKB_INGEST_CONCURRENCY", 1, 1, 64),
    executionConcurrency: integer(env, "REGKB_EXECUTION_CONCURRENCY", 2, 1, 64),
    runsPerOrganisationMax: integer(env, "REGKB_RUNS_PER_ORGANISATION_MAX", 0, 0, 64),
    databaseStatementTimeoutMs: integer(env, "REGKB_DATABASE_STATEMENT_TIMEOUT_MS", STATEMENT_TIMEOUT_MS_DEFAULT, 100, 600_000),
    replicaPollMs: integer(env, "REGKB_REPLICA_POLL_MS", 500, 50, 60_000),
    replicaBatchChanges: integer(env, "REGKB_REPLICA_BATCH_CHANGES", 500, 1, 500),
    runLeaseMs: integer(env, "REGKB_RUN_LEASE_MS", 30_000, 1_000, 3_600_000),
    runMaxAttempts: integer(env, "REGKB_RUN_MAX_ATTEMPTS", 3, 1, 100),
    shutdownTimeoutMs: integer(env, "REGKB_SHUTDOWN_TIMEOUT_MS", 10_000, 0, 600_000),
    testHookScreeningKeywordDelayMs: integer(env, "REGKB_TEST_HOOK_SCREENING_KEYWORD_DELAY_MS", 0, 0, 10_000),
  };
}
