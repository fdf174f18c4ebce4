import { systemClock, type Clock } from "./clock";
import type { Config } from "./config";
import { cacheDir, databasePath, openDatabase } from "./db/open";
import { openPostgres } from "./db/postgres/connect";
import { openPostgresSystemOfRecord } from "./db/postgres/system-of-record";
import type { SqlDatabase } from "./db/sql-database";
import { StorageMonitor } from "./db/storage";
import { DataDirectoryFiles, PostgresDocumentFiles, type DocumentFiles } from "./documents/document-files";
import { DocumentFailureLimit } from "./documents/failure-limit";
import { createPdfParser, type PdfParser } from "./documents/pdf/parser";
import type { PaymentProvider } from "./billing/payments";
import { StripePayments } from "./billing/stripe";
import { Metrics } from "./metrics";
import { RateLimiter } from "./http/rate-limit";
import { SandboxPool } from "./executions/sandbox/pool";
import { RunEngine } from "./jobs/engine";
import { createLogger, type Logger } from "./log";
import { createEmbedder, type Embedder } from "./search/embedder/index";
import { Lexicon } from "./search/lexicon";
import { maintainSearchIndex } from "./search/maintenance";
import { ReplicaNode } from "./search/replica/node";
import { PostgresPassageWriter } from "./search/replica/postgres-passage-writer";
import { LocalPassageWriter, type PassageWriter } from "./search/passage-writer";
import { SearchIndex } from "./search/search-index";
import { VectorSearchPool } from "./search/vector-pool";

/**
 * Everything a request or a run needs, built once and passed in (no module singletons),
 * so tests can give each server its own database, clock and configuration.
 */
export interface Deps {
  config: Config;
  /**
   * The system of record: organisations, keys, the ledger, runs, documents… The data
   * directory's SQLite database, or PostgreSQL (REGKB_DATABASE_URL) through the synchronous
   * handle. Passages are searched in `searchIndex`, never here.
   */
  db: SqlDatabase;
  clock: Clock;
  log: Logger;
  metrics: Metrics;
  /** Whether the data directory's disk is full (503 storage_full, /healthz). */
  storage: StorageMonitor;
  rateLimiter: RateLimiter;
  /** PDF parsing in killable child processes (page counts at upload, text at ingestion). */
  pdf: PdfParser;
  /** Uploads that failed on their content, per organisation (REGKB_DOCUMENT_FAILURES_PER_HOUR). */
  documentFailures: DocumentFailureLimit;
  /** Where uploaded PDFs are kept: the data directory's files, or PostgreSQL's document_files. */
  documentFiles: DocumentFiles;
  /** Where documents' passages are written: this node's search index, or PostgreSQL (its replica follows). */
  passages: PassageWriter;
  /** Card top-ups: hosted checkouts and their signed webhooks (Stripe, when REGKB_STRIPE_SECRET_KEY is set). */
  payments: PaymentProvider;
  /** Durable background runs: capabilities register their kinds; background.ts starts and stops it. */
  jobs: RunEngine;
  /** Locked Pyodide children for executions; started (kept warm) only by serving processes. */
  sandbox: SandboxPool;
  /** Turns text into vectors for search and indexing (REGKB_EMBEDDER). */
  embedder: Embedder;
  /** The knowledge-base index with `embedder`, and its caches: always the data directory's SQLite (with PostgreSQL, this node's replica). */
  searchIndex: SearchIndex;
  /** With PostgreSQL: this node's index following PostgreSQL's passages (started by serve). */
  replica: ReplicaNode | undefined;
  /** The vocabulary bridge a search expands its query through (data/lexicon). */
  lexicon: Lexicon;
  /** Threads that run searches (REGKB_SEARCH_WORKERS); undefined: searches run on the request's thread. */
  vectorSearchPool: VectorSearchPool | undefined;
}

export interface DepsOverrides {
  clock?: Clock;
  log?: Logger;
}

export async function createDeps(config: Config, overrides: DepsOverrides = {}): Promise<Deps> {
  const local = await openDatabase(config.dataDir, config.sqliteSynchronous, { init: config.initDatabase });
  const db = config.databaseUrl === undefined ? local : openSystemOfRecord(config, config.databaseUrl, local);
  const embedder = await createEmbedder(config.embedder);
  const clock = overrides.clock ?? systemClock;
  const log = overrides.log ?? createLogger(config.logLevel);
  const metrics = new Metrics();
  const searchIndex = new SearchIndex(local, embedder);
  // With PostgreSQL: reads of passages, and the LISTEN connections of the replica and the run engine; the system of record's statements go through `db`.
  const postgres = config.databaseUrl === undefined ? undefined : openPostgres({ url: config.databaseUrl, poolSize: 2 });
  const deps: Deps = {
    config,
    db,
    clock,
    log,
    metrics,
    storage: new StorageMonitor({ dataDir: config.dataDir, clock, log }),
    rateLimiter: new RateLimiter(config.rateLimitPerMinute),
    embedder,
    searchIndex,
    replica: undefined,
    lexicon: await Lexicon.load(),
    vectorSearchPool:
      config.searchWorkers === 0
        ? undefined
        : new VectorSearchPool({
            databaseFile: databasePath(config.dataDir),
            cacheDir: cacheDir(config.dataDir),
            workers: config.searchWorkers,
            wholeSearches: config.embedder.kind === "static",
            log,
          }),
    pdf: createPdfParser({ childrenMax: config.pdfParsersMax, memoryBytes: config.pdfMemoryBytes }),
    documentFailures: new DocumentFailureLimit(config.documentFailuresPerHour),
    documentFiles: new DataDirectoryFiles(config.dataDir),
    passages: new LocalPassageWriter(searchIndex),
    payments: new StripePayments(config, log),
    jobs: new RunEngine({ config, db, clock, log, metrics, listener: postgres }),
    sandbox: await SandboxPool.create({
      size: config.sandboxPoolSize,
      cacheDir: cacheDir(config.dataDir),
      unsafeNoIsolation: config.sandboxUnsafeNoIsolation,
      memoryBytes: config.executionMemoryBytes,
      log,
    }),
  };
  if (postgres !== undefined) {
    const replica = new ReplicaNode({
      sql: postgres,
      index: searchIndex,
      log,
      pollMs: config.replicaPollMs,
      batchChangesMax: config.replicaBatchChanges,
      afterChanges: async () => void (await maintainSearchIndex(deps)),
    });
    deps.replica = replica;
    deps.documentFiles = new PostgresDocumentFiles(db);
    deps.passages = new PostgresPassageWriter({
      db,
      embedder,
      // Read-your-writes: a document is ready once this node's own index holds its passages.
      afterWrite: async () => void (await replica.catchUp()),
      onAfterWriteError: (error) => log.warn("replica_catch_up_failed", { error: error.message.split("\n")[0] }),
    });
  }
  return deps;
}

function openSystemOfRecord(config: Config, url: string, local: SqlDatabase): SqlDatabase {
  try {
    return openPostgresSystemOfRecord(url, config.databaseStatementTimeoutMs);
  } catch (error) {
    local.close();
    throw error;
  }
}

/** Closes the system of record, and this node's index when it is another database. */
export async function closeDatabases(deps: Deps): Promise<void> {
  await deps.replica?.close();
  deps.db.close();
  if (deps.searchIndex.db !== deps.db) deps.searchIndex.db.close();
}
