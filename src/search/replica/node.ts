/**
 * A serving node's search index kept as a replica of PostgreSQL's passages: caught up
 * before the node listens, then followed (notifications, and a poll as the fallback) while
 * it serves. It also knows, without asking PostgreSQL, how stale the index may be, so every
 * search can say so (the `Regkb-Index-Behind-Ms` header) at no cost.
 */
import type { SQL } from "bun";
import type { Logger } from "../../log";
import type { BackgroundService } from "../../lifecycle";
import type { SearchIndex } from "../search-index";
import { ReplicaFollower, type CatchUpReport } from "./follower";

export interface ReplicaNodeOptions {
  sql: SQL;
  index: SearchIndex;
  log: Logger;
  pollMs: number;
  batchChangesMax: number;
  /** After a pass that changed the index (maintenance: clustering a grown corpus). */
  afterChanges: () => Promise<void>;
  nowMs?: () => number;
}

/** Behind by more than this: logged (at most once per BEHIND_LOG_EVERY_MS), besides the header. */
const BEHIND_WARN_MS = 2_000;
const BEHIND_LOG_EVERY_MS = 10_000;

export class ReplicaNode implements BackgroundService {
  readonly name = "replica";
  readonly #follower: ReplicaFollower;
  readonly #nowMs: () => number;
  #controller: AbortController | undefined;
  #following: Promise<void> | undefined;
  /** Start of the latest pass that succeeded: every change committed before it is in the index. */
  #coveredUntilMs: number | undefined;
  #passStartedMs = 0;
  /** The latest pass failed (PostgreSQL unreachable): nothing newer than #coveredUntilMs is known. */
  #failing = false;
  /** First notification since the latest pass started (a change the index may not hold yet). */
  #notifiedAtMs: number | undefined;
  #lastBehindLogMs = 0;

  constructor(private readonly options: ReplicaNodeOptions) {
    this.#nowMs = options.nowMs ?? Date.now;
    this.#follower = new ReplicaFollower(options.sql, options.index, { batchChangesMax: options.batchChangesMax, nowMs: this.#nowMs });
  }

  /** Before listening: refuse a mismatched index or embedder, then apply every change committed so far. */
  async catchUpBeforeServing(): Promise<CatchUpReport> {
    const startedMs = this.#nowMs();
    const report = await this.#follower.catchUp();
    this.#coveredUntilMs = startedMs;
    return report;
  }

  /** Applies what has been committed so far (this node's own writes, for read-your-writes). */
  async catchUp(): Promise<CatchUpReport> {
    const startedMs = this.#nowMs();
    const report = await this.#follower.catchUp();
    this.#coveredUntilMs = Math.max(this.#coveredUntilMs ?? 0, startedMs);
    return report;
  }

  /**
   * How stale the index may be, in ms: 0 when no change is known to be pending; else since
   * the first pending change was notified, or since the last pass that succeeded (while
   * PostgreSQL cannot be read, nothing newer is known).
   */
  behindMs(): number {
    const now = this.#nowMs();
    const notified = this.#notifiedAtMs === undefined ? 0 : now - this.#notifiedAtMs;
    const failing = this.#failing ? now - (this.#coveredUntilMs ?? now) : 0;
    return Math.max(0, notified, failing);
  }

  start(): void {
    const controller = new AbortController();
    this.#controller = controller;
    const { log } = this.options;
    this.#following = this.#follower
      .follow({
        pollMs: this.options.pollMs,
        signal: controller.signal,
        afterChanges: this.options.afterChanges,
        onPassStart: () => {
          this.#passStartedMs = this.#nowMs();
        },
        onNotification: () => {
          this.#notifiedAtMs ??= this.#nowMs();
        },
        onPass: () => {
          this.#failing = false;
          this.#coveredUntilMs = Math.max(this.#coveredUntilMs ?? 0, this.#passStartedMs);
          if (this.#notifiedAtMs !== undefined && this.#notifiedAtMs <= this.#passStartedMs) this.#notifiedAtMs = undefined;
          this.#warnIfBehind();
        },
        onError: (error) => {
          this.#failing = true;
          log.warn("replica_pass_failed", { error: error.message.split("\n")[0] });
          this.#warnIfBehind();
        },
      })
      .catch((error: Error) => log.error("replica_stopped", { error: error.message.split("\n")[0] }));
  }

  async stop(): Promise<void> {
    this.#controller?.abort();
    await this.#following;
  }

  /** Stops following and closes `sql` (the run engine listens on it too: close once the engine has stopped). */
  async close(): Promise<void> {
    await this.stop();
    await this.options.sql.close();
  }

  #warnIfBehind(): void {
    const behindMs = this.behindMs();
    const now = this.#nowMs();
    if (behindMs <= BEHIND_WARN_MS || now - this.#lastBehindLogMs < BEHIND_LOG_EVERY_MS) return;
    this.#lastBehindLogMs = now;
    this.options.log.warn("search_index_behind", { behindMs });
  }
}
