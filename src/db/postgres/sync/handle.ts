/**
 * A synchronous PostgreSQL handle: the part of bun:sqlite's Database the ported stores use
 * (sql-database.ts), on a PostgreSQL connection owned by a worker thread. Each statement is
 * posted to the worker and the calling thread blocks (Atomics.wait) until the reply is in
 * the shared buffer, so a store's transaction stays one synchronous function with no await
 * inside, exactly as on SQLite, and a process runs its transactions one at a time.
 *
 * The price: the calling thread (a server's event loop) stands still for every round trip
 * (docs/scale-out.md has the figures), as it does for SQLite's fsync. A stall is bounded:
 * the server cancels a statement or lock wait after the statement timeout, and the caller
 * gives up waiting a margin later, when the worker and its connection are replaced (which
 * rolls back whatever transaction the connection held).
 */
import { deserialize } from "bun:jsc";
import { isCompiled } from "../../../platform/assets";
import { redactDatabaseUrl } from "../connect";
import { POSTGRES_DIALECT, type SqlBinding, type SqlChanges, type SqlDatabase, type SqlStatement, type SqlTransaction } from "../../sql-database";
import { toPostgresSql } from "./translate";
import {
  FLAG_REPLIED,
  FLAG_WAITING,
  REPLY_BYTES_INITIAL,
  REPLY_BYTES_MAX,
  STATE_FLAG,
  STATE_REPLY_BYTES,
  type WorkerError,
  type WorkerInit,
  type WorkerReply,
  type WorkerRequest,
} from "./protocol";

const WORKER_URL = isCompiled() ? "./db/postgres/sync/worker.ts" : new URL("./worker.ts", import.meta.url).href;

/** Beyond the statement timeout: the round trip, and the connection's own start (connect.ts allows 10 s). */
const WAIT_MARGIN_MS = 12_000;
/** Statements whose translation is kept, as bun:sqlite keeps its query() statements. */
const STATEMENTS_CACHED_MAX = 1_000;

/** PostgreSQL cancels a statement, or a wait for a lock, after this long. */
export const STATEMENT_TIMEOUT_MS_DEFAULT = 5_000;

export interface PostgresHandleSettings {
  /** postgres:// URL, password included; never logged (redactDatabaseUrl). */
  url: string;
  /** Server-side bound on every statement and lock wait; STATEMENT_TIMEOUT_MS_DEFAULT when not given. */
  statementTimeoutMs?: number;
  /** How long past the statement timeout the caller still waits for a reply; WAIT_MARGIN_MS when not given. */
  waitMarginMs?: number;
  /** The worker's entry point; tests give one that stalls. */
  workerUrl?: string;
}

/** A statement PostgreSQL refused (or a lost connection), with SQLSTATE and a SQLite-shaped `code` where one applies. */
export class PostgresStatementError extends Error {
  override name = "PostgresStatementError";
  /** SQLite's name for the same refusal (SQLITE_CONSTRAINT_UNIQUE for 23505, …), else `POSTGRES_<SQLSTATE>`. */
  readonly code: string;
  readonly sqlState: string | undefined;
  readonly constraint: string | undefined;

  constructor(error: WorkerError) {
    super(error.message);
    this.sqlState = error.sqlState;
    this.constraint = error.constraint;
    this.code = (error.sqlState && SQLITE_CODES[error.sqlState]) ?? `POSTGRES_${error.sqlState ?? (error.connectionLost ? "CONNECTION_LOST" : "CLIENT")}`;
  }
}

const SQLITE_CODES: Record<string, string> = {
  "23505": "SQLITE_CONSTRAINT_UNIQUE",
  "23514": "SQLITE_CONSTRAINT_CHECK",
  "23503": "SQLITE_CONSTRAINT_FOREIGNKEY",
  "23502": "SQLITE_CONSTRAINT_NOTNULL",
};

export class PostgresHandle implements SqlDatabase {
  readonly [POSTGRES_DIALECT] = true;
  private worker: Worker | undefined;
  // Each worker gets buffers of its own: a replaced worker still finishing its last statement cannot answer for the next one.
  private state = new Int32Array(new SharedArrayBuffer(8));
  private reply = new SharedArrayBuffer(0);
  private readonly statements = new Map<string, PostgresStatement<unknown, SqlBinding[]>>();
  private depth = 0;
  /** The BEGIN of an open transaction that has not run a statement yet. */
  private pendingBegin: string | undefined;
  /** Set when the connection went while a transaction was open: its statements fail until it ends. */
  private transactionLost = false;
  private closed = false;

  private readonly statementTimeoutMs: number;

  constructor(private readonly settings: PostgresHandleSettings) {
    this.statementTimeoutMs = settings.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS_DEFAULT;
    if (!Number.isSafeInteger(this.statementTimeoutMs) || this.statementTimeoutMs < 1 || this.statementTimeoutMs > 600_000) {
      throw new Error(`statementTimeoutMs must be 1 to 600000, got ${this.statementTimeoutMs}`);
    }
    this.start();
  }

  get inTransaction(): boolean {
    return this.depth > 0;
  }

  query<Row = unknown, Params extends SqlBinding | SqlBinding[] = SqlBinding[]>(
    sql: string,
  ): SqlStatement<Row, Params extends any[] ? Params : [Params]> {
    let statement = this.statements.get(sql);
    if (!statement) {
      if (this.statements.size >= STATEMENTS_CACHED_MAX) this.statements.clear();
      statement = new PostgresStatement(this, toPostgresSql(sql));
      this.statements.set(sql, statement);
    }
    return statement as unknown as SqlStatement<Row, Params extends any[] ? Params : [Params]>;
  }

  /** One or more statements without parameters, as sent (no translation). */
  exec(sql: string): SqlChanges {
    this.call({ kind: "exec", sql, params: [] });
    return { changes: 0, lastInsertRowid: 0 };
  }

  /**
   * bun:sqlite's transaction(): immediate/exclusive are BEGIN (READ COMMITTED: the caller
   * locks what it decides on, see forUpdate), deferred (and a plain call) a REPEATABLE READ
   * snapshot, like a WAL read transaction; nested calls are savepoints. A statement error
   * ends a PostgreSQL transaction, so a ported store never catches one and carries on inside.
   */
  transaction<Args extends unknown[], Result>(fn: (...args: Args) => Result): SqlTransaction<Args, Result> {
    const runner = (begin: string) => (...args: Args) => this.runTransaction(begin, fn, args);
    const snapshot = "BEGIN ISOLATION LEVEL REPEATABLE READ";
    return Object.assign(runner(snapshot), { deferred: runner(snapshot), immediate: runner("BEGIN"), exclusive: runner("BEGIN") });
  }

  close(): void {
    this.closed = true;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  /** Sends one request and blocks until its reply. Used by the statements. */
  call(request: WorkerRequest): { columns: string[]; rows: unknown[][]; changes: number } {
    if (this.closed) throw new Error("the PostgreSQL handle is closed");
    if (this.transactionLost) throw new PostgresStatementError(lostInTransaction());
    if (!this.worker) this.start();
    const begin = this.pendingBegin;
    this.pendingBegin = undefined;
    const answer = this.exchange(begin === undefined ? request : { ...request, begin });
    if (answer.ok) return answer;
    if (answer.error.connectionLost) this.lose();
    throw new PostgresStatementError(answer.error);
  }

  private exchange(request: WorkerRequest | WorkerInit, waitMs = this.statementTimeoutMs + (this.settings.waitMarginMs ?? WAIT_MARGIN_MS)): WorkerReply {
    Atomics.store(this.state, STATE_FLAG, FLAG_WAITING);
    this.worker!.postMessage(request);
    if (Atomics.wait(this.state, STATE_FLAG, FLAG_WAITING, waitMs) === "timed-out") {
      this.lose();
      void this.worker?.terminate();
      this.worker = undefined;
      throw new PostgresStatementError({
        message: `PostgreSQL at ${redactDatabaseUrl(this.settings.url)} did not answer within ${waitMs} ms; the connection was replaced`,
        sqlState: undefined,
        constraint: undefined,
        connectionLost: true,
      });
    }
    const bytes = Atomics.load(this.state, STATE_REPLY_BYTES);
    return deserialize(new Uint8Array(this.reply, 0, bytes).slice()) as WorkerReply;
  }

  private start(): void {
    this.state = new Int32Array(new SharedArrayBuffer(8));
    this.reply = new SharedArrayBuffer(REPLY_BYTES_INITIAL, { maxByteLength: REPLY_BYTES_MAX });
    this.worker = new Worker(this.settings.workerUrl ?? WORKER_URL, { ref: false });
    const init: WorkerInit = {
      kind: "init",
      url: this.settings.url,
      statementTimeoutMs: this.statementTimeoutMs,
      state: this.state.buffer,
      reply: this.reply,
    };
    const answer = this.exchange(init);
    if (!answer.ok) {
      void this.worker?.terminate();
      this.worker = undefined;
      throw new PostgresStatementError({ ...answer.error, message: `cannot connect to ${redactDatabaseUrl(this.settings.url)}: ${answer.error.message}` });
    }
  }

  private lose(): void {
    if (this.depth > 0) this.transactionLost = true;
  }

  private runTransaction<Args extends unknown[], Result>(begin: string, fn: (...args: Args) => Result, args: Args): Result {
    const depth = this.depth;
    const savepoint = `regkb_savepoint_${depth}`;
    // BEGIN travels with the transaction's first statement: one trip to the worker fewer.
    if (depth === 0) this.pendingBegin = begin;
    else this.exec(`SAVEPOINT ${savepoint}`);
    this.depth = depth + 1;
    try {
      const result = fn(...args);
      if (depth > 0) this.exec(`RELEASE SAVEPOINT ${savepoint}`);
      else if (this.pendingBegin === undefined) this.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.pendingBegin === undefined && !this.transactionLost) {
        try {
          this.exec(depth === 0 ? "ROLLBACK" : `ROLLBACK TO SAVEPOINT ${savepoint}; RELEASE SAVEPOINT ${savepoint}`);
        } catch {
          // The first error says what went wrong; a connection that cannot roll back is gone, and so is its transaction.
        }
      }
      throw error;
    } finally {
      this.depth = depth;
      if (depth === 0) {
        this.transactionLost = false;
        this.pendingBegin = undefined;
      }
    }
  }
}

function lostInTransaction(): WorkerError {
  return {
    message: "the PostgreSQL connection was lost inside this transaction, which was rolled back",
    sqlState: undefined,
    constraint: undefined,
    connectionLost: true,
  };
}

class PostgresStatement<Row, Params extends SqlBinding[]> implements SqlStatement<Row, Params> {
  constructor(
    private readonly handle: PostgresHandle,
    private readonly sql: string,
  ) {}

  all(...params: Params): Row[] {
    const { columns, rows } = this.handle.call({ kind: "rows", sql: this.sql, params });
    return rows.map((values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
      return row as Row;
    });
  }

  get(...params: Params): Row | null {
    return this.all(...params)[0] ?? null;
  }

  run(...params: Params): SqlChanges {
    // PostgreSQL has no rowid: a store that needs a new row's id asks with RETURNING.
    return { changes: this.handle.call({ kind: "run", sql: this.sql, params }).changes, lastInsertRowid: 0 };
  }

  values(...params: Params): SqlBinding[][] {
    return this.handle.call({ kind: "rows", sql: this.sql, params }).rows as SqlBinding[][];
  }
}

export function openPostgresHandle(settings: PostgresHandleSettings): PostgresHandle {
  return new PostgresHandle(settings);
}
