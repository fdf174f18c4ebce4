import { statfsSync } from "node:fs";
import type { Clock } from "../clock";
import type { LogFields, Logger } from "../log";

/** What a client told "storage_full" should wait before trying again. */
export const STORAGE_FULL_RETRY_AFTER_SECONDS = 60;
/** A full disk fails every write: one log line per this interval, not one per request. */
export const STORAGE_FULL_LOG_INTERVAL_MS = 60_000;
/** Less than this left for the data directory counts as full on /healthz, before a write has failed. */
export const STORAGE_FREE_BYTES_MIN = 1024 * 1024;

/** SQLite's SQLITE_FULL and the file system's ENOSPC / EDQUOT, however deeply wrapped. */
const FULL_CODES = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
/** SQLite's text for SQLITE_FULL, kept by extensions (sqlite-vec) that report it under another code. */
const SQLITE_FULL_TEXT = "database or disk is full";
const CAUSE_DEPTH_MAX = 5;

export function isStorageFull(error: unknown): boolean {
  let current = error;
  for (let depth = 0; depth < CAUSE_DEPTH_MAX && typeof current === "object" && current !== null; depth++) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === "string" && FULL_CODES.has(code)) return true;
    if (name === "SQLiteError" && typeof message === "string" && message.includes(SQLITE_FULL_TEXT)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

export type StorageState = "ok" | "full";

/**
 * Knows whether the data directory's disk is full: from the file system's free space, and
 * from writes that failed for lack of it (a large transaction can fail while a little
 * space is still free). Logs those failures at most once per interval.
 */
export class StorageMonitor {
  private lastFull: { atMs: number; freeBytes: number } | undefined;
  private lastLoggedAtMs = Number.NEGATIVE_INFINITY;
  private suppressed = 0;

  constructor(private readonly deps: { dataDir: string; clock: Clock; log: Logger }) {}

  /** A write failed for lack of space. */
  noteFull(fields: LogFields = {}): void {
    const nowMs = this.deps.clock.nowMs();
    const freeBytes = this.freeBytes();
    this.lastFull = { atMs: nowMs, freeBytes: freeBytes ?? 0 };
    if (nowMs - this.lastLoggedAtMs < STORAGE_FULL_LOG_INTERVAL_MS) {
      this.suppressed++;
      return;
    }
    this.deps.log.error("storage_full", { ...fields, dataDir: this.deps.dataDir, freeBytes: freeBytes ?? null, suppressedSinceLastLine: this.suppressed });
    this.lastLoggedAtMs = nowMs;
    this.suppressed = 0;
  }

  /**
   * "full" while less than STORAGE_FREE_BYTES_MIN is left, or while a write failed for
   * lack of space within the retry interval and no space has been freed since.
   */
  state(): StorageState {
    const freeBytes = this.freeBytes();
    if (freeBytes !== undefined && freeBytes < STORAGE_FREE_BYTES_MIN) return "full";
    const last = this.lastFull;
    if (!last || this.deps.clock.nowMs() - last.atMs >= STORAGE_FULL_RETRY_AFTER_SECONDS * 1000) return "ok";
    return freeBytes !== undefined && freeBytes >= last.freeBytes + STORAGE_FREE_BYTES_MIN ? "ok" : "full";
  }

  /** Space this process may still use (root may use the reserved blocks too); undefined when the file system will not say. */
  private freeBytes(): number | undefined {
    try {
      const stats = statfsSync(this.deps.dataDir);
      return (process.getuid?.() === 0 ? stats.bfree : stats.bavail) * stats.bsize;
    } catch {
      return undefined;
    }
  }
}
