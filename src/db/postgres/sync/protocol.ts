// What the handle (handle.ts) and its worker (worker.ts) say to each other. A request goes
// by postMessage; the reply is written, serialised, into a shared buffer the calling thread
// reads once the worker flips the state word and notifies it.

/** Words of the shared state array. */
export const STATE_FLAG = 0;
export const STATE_REPLY_BYTES = 1;
/** STATE_FLAG values. */
export const FLAG_WAITING = 0;
export const FLAG_REPLIED = 1;

/** The reply buffer starts small and grows to at most this; a larger result is an error. */
export const REPLY_BYTES_INITIAL = 64 * 1024;
export const REPLY_BYTES_MAX = 64 * 1024 * 1024;

export interface WorkerInit {
  kind: "init";
  url: string;
  statementTimeoutMs: number;
  state: SharedArrayBuffer;
  reply: SharedArrayBuffer;
}

/** `rows`: the result's columns and rows; `run`: rows changed; `exec`: one or more statements without parameters. */
export interface WorkerRequest {
  kind: "rows" | "run" | "exec";
  sql: string;
  params: unknown[];
  /** A transaction's BEGIN, run just before the statement. */
  begin?: string;
}

export interface WorkerError {
  message: string;
  /** PostgreSQL's SQLSTATE when the server refused the statement. */
  sqlState: string | undefined;
  constraint: string | undefined;
  /** The connection was lost: whatever transaction it held is gone. */
  connectionLost: boolean;
}

export type WorkerReply =
  | { ok: true; columns: string[]; rows: unknown[][]; changes: number }
  | { ok: false; error: WorkerError };

/**
 * A failure after which the worker's connection is not to be used again: the connection is
 * gone (SQLSTATE class 08, the server ending the session: 57P01–57P03, or Bun's connection
 * errors), or Bun's driver failed on its own (an ERR_POSTGRES_* error without a SQLSTATE:
 * a message it could not read), which can leave the connection's replies out of step with
 * its statements, so a later statement could get an earlier one's rows.
 */
export function connectionUnusable(error: { errno?: unknown; code?: unknown }): boolean {
  const sqlState = sqlStateOf(error);
  if (sqlState !== undefined) return sqlState.startsWith("08") || ["57P01", "57P02", "57P03"].includes(sqlState);
  return String(error.code ?? "").startsWith("ERR_POSTGRES_");
}

/** PostgreSQL's SQLSTATE of a server's refusal, as Bun's driver reports it (errno). */
export function sqlStateOf(error: { errno?: unknown }): string | undefined {
  return typeof error.errno === "string" && /^[0-9A-Z]{5}$/.test(error.errno) ? error.errno : undefined;
}
