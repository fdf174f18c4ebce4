/**
 * A node's search index as a replica of PostgreSQL's passages. The node remembers the last
 * seq of passage_changes it applied (in its own search_index_meta, written in the same
 * SQLite transaction as the passages of that batch, so a node stopped anywhere resumes
 * without gaps or duplicates) and applies the rest in seq order, in batches. Each change
 * only names a passage: the passage is loaded as it now stands in PostgreSQL, with its
 * stored vector (never re-embedded), and indexed with the same id; a passage that has gone
 * is removed. Applying a change twice therefore changes nothing.
 *
 * `follow()` repeats the catch-up when PostgreSQL notifies a change (channel
 * REPLICA_CHANNEL, sent by migration 013's trigger at commit) and at least every poll
 * interval, since a notification sent while the listening connection is down is lost.
 */
import type { Database } from "bun:sqlite";
import type { SQL } from "bun";
import { countChunks } from "../chunk-store";
import { putStoredPassages, type StoredPassage } from "../indexing";
import { readMetaValue, writeMetaValue } from "../meta-store";
import type { SearchIndex } from "../search-index";
import {
  allJurisdictions,
  changesAfter,
  logPosition,
  organisationsByIds,
  passagesByIds,
  postgresEmbedder,
  postgresHasPassages,
  type PassageChange,
  type PostgresPassage,
} from "./postgres-passages";

/** The NOTIFY channel migration 013's trigger signals on every committed passage change. */
export const REPLICA_CHANNEL = "regkb_passages";
/** search_index_meta keys: the last seq applied, and when that change was made in PostgreSQL. */
export const REPLICA_APPLIED_SEQ = "replica_applied_seq";
const REPLICA_APPLIED_AT_MS = "replica_applied_changed_at_ms";
/** Changes per batch: each batch is one PostgreSQL read of its passages and one SQLite transaction (~2 MB of vectors and text). */
export const REPLICA_BATCH_CHANGES_MAX = 500;

/** A replica that must not proceed; the message says why and what to do. */
export class ReplicaRefused extends Error {
  override name = "ReplicaRefused";
}

export interface CatchUpReport {
  /** Changes read from the log. */
  changes: number;
  batches: number;
  /** Passages (re)indexed, already held as they stand, and removed. */
  written: number;
  unchanged: number;
  removed: number;
  appliedSeq: number;
}

export interface ReplicaLag {
  appliedSeq: number;
  newestSeq: number;
  /** Changes committed in PostgreSQL and not yet applied here. */
  seqLag: number;
  /** When the newest applied change was made in PostgreSQL (undefined: none applied yet). */
  appliedChangedAtMs: number | undefined;
  /** Milliseconds since then. */
  msSinceAppliedChange: number | undefined;
  /** How stale the index may be: 0 when nothing is pending, else ms since the oldest pending change was made. */
  behindMs: number;
}

export interface FollowerOptions {
  batchChangesMax?: number;
  nowMs?: () => number;
}

export interface FollowOptions {
  pollMs: number;
  signal: AbortSignal;
  /** After every catch-up pass that changed the index (maintenance: clustering when grown). */
  afterChanges?: (report: CatchUpReport) => Promise<void>;
  /** After every pass, with the lag measured then. */
  onPass?: (report: CatchUpReport, lag: ReplicaLag) => void;
  /** A failed pass (PostgreSQL unreachable): the follower waits a poll interval and tries again. */
  onError?: (error: Error) => void;
  /** Before each pass: every change committed before this moment is applied once the pass succeeds. */
  onPassStart?: () => void;
  /** A change was committed in PostgreSQL (a notification), not yet applied here. */
  onNotification?: () => void;
}

export class ReplicaFollower {
  readonly #batch: number;
  readonly #nowMs: () => number;
  #checked = false;
  /** The pass in progress: passes take turns, so the applied position only ever moves forward. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly sql: SQL,
    private readonly index: SearchIndex,
    options: FollowerOptions = {},
  ) {
    this.#batch = Math.max(1, Math.min(REPLICA_BATCH_CHANGES_MAX, options.batchChangesMax ?? REPLICA_BATCH_CHANGES_MAX));
    this.#nowMs = options.nowMs ?? Date.now;
  }

  /** The last seq applied here (0: none). */
  appliedSeq(): number {
    return Number(readMetaValue(this.index.db, REPLICA_APPLIED_SEQ) ?? 0);
  }

  /**
   * Refuses vectors of another embedder than this node's (the node would answer queries
   * with one model against vectors of another), and an index holding passages that did not
   * come from PostgreSQL (a single node's own corpus: its ids would collide).
   */
  async check(): Promise<void> {
    if (this.#checked) return;
    const { db, embedder } = this.index;
    const stored = await postgresEmbedder(this.sql);
    if (stored === undefined && (await postgresHasPassages(this.sql))) {
      throw new ReplicaRefused("PostgreSQL holds passages but records no embedder for their vectors (search_index_meta): it was not filled by regkb");
    }
    if (stored !== undefined && (stored.embedderId !== embedder.id || stored.dimensions !== embedder.dimensions)) {
      throw new ReplicaRefused(
        `PostgreSQL's passage vectors were made by embedder ${stored.embedderId} (${stored.dimensions}-d) but this node is configured with ` +
          `${embedder.id} (${embedder.dimensions}-d): configure the same embedder (REGKB_EMBEDDER and its settings) on every node; a replica never re-embeds`,
      );
    }
    if (readMetaValue(db, REPLICA_APPLIED_SEQ) === undefined && countChunks(db) > 0) {
      throw new ReplicaRefused(
        `this data directory's search index already holds ${countChunks(db)} passages that did not come from PostgreSQL: use an empty data directory for a node`,
      );
    }
    this.#checked = true;
  }

  /** Applies every change committed so far, batch by batch; a call made during a pass waits for it, then makes its own. */
  catchUp(): Promise<CatchUpReport> {
    const pass = this.#queue.then(
      () => this.#catchUpNow(),
      () => this.#catchUpNow(),
    );
    this.#queue = pass.catch(() => undefined);
    return pass;
  }

  async #catchUpNow(): Promise<CatchUpReport> {
    await this.check();
    const report: CatchUpReport = { changes: 0, batches: 0, written: 0, unchanged: 0, removed: 0, appliedSeq: this.appliedSeq() };
    for (;;) {
      const changes = await changesAfter(this.sql, report.appliedSeq, this.#batch);
      if (changes.length === 0) return report;
      const applied = await this.#applyBatch(changes);
      report.changes += changes.length;
      report.batches++;
      report.written += applied.written;
      report.unchanged += applied.unchanged;
      report.removed += applied.removed;
      report.appliedSeq = changes.at(-1)!.seq;
    }
  }

  async lag(): Promise<ReplicaLag> {
    const appliedSeq = this.appliedSeq();
    const { newestSeq, firstPendingAtMs } = await logPosition(this.sql, appliedSeq);
    const at = readMetaValue(this.index.db, REPLICA_APPLIED_AT_MS);
    const appliedChangedAtMs = at === undefined ? undefined : Number(at);
    const now = this.#nowMs();
    return {
      appliedSeq,
      newestSeq,
      seqLag: Math.max(0, newestSeq - appliedSeq),
      appliedChangedAtMs,
      msSinceAppliedChange: appliedChangedAtMs === undefined ? undefined : Math.max(0, now - appliedChangedAtMs),
      behindMs: firstPendingAtMs === undefined ? 0 : Math.max(0, now - firstPendingAtMs),
    };
  }

  /** Catches up, then again on every notification and every `pollMs`, until `signal` aborts. */
  async follow(options: FollowOptions): Promise<void> {
    await this.check();
    let notified = false;
    let wake = () => {};
    const subscription = await this.sql.listen(REPLICA_CHANNEL, () => {
      notified = true;
      options.onNotification?.();
      wake();
    });
    try {
      while (!options.signal.aborted) {
        notified = false;
        options.onPassStart?.();
        try {
          const report = await this.catchUp();
          if (report.written + report.removed > 0) await options.afterChanges?.(report);
          options.onPass?.(report, await this.lag());
        } catch (error) {
          if (error instanceof ReplicaRefused) throw error;
          options.onError?.(error as Error);
        }
        // A notification that came during the pass may name a change the pass did not see.
        if (notified || options.signal.aborted) continue;
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            options.signal.removeEventListener("abort", done);
            wake = () => {};
            resolve();
          };
          const timer = setTimeout(done, options.pollMs);
          options.signal.addEventListener("abort", done);
          wake = done;
        });
      }
    } finally {
      await subscription.unlisten();
    }
  }

  async #applyBatch(changes: PassageChange[]) {
    const ids = [...new Set(changes.map((c) => c.chunkId))];
    // Each passage as it stands now: a later change to it reloads it again, so the batch's own ops need not be replayed one by one.
    const found = await passagesByIds(this.sql, ids);
    const present = found.filter((p): p is PostgresPassage & { vector: Float32Array } => p.vector !== undefined);
    const presentIds = new Set(present.map((p) => p.id));
    await this.#copyReferencedRows(present);
    const last = changes.at(-1)!;
    return putStoredPassages(
      this.index,
      present.map(storedPassage),
      // Gone since, or without its vector yet (the change that writes it reloads the passage).
      ids.filter((id) => !presentIds.has(id)),
      () => {
        writeMetaValue(this.index.db, REPLICA_APPLIED_SEQ, String(last.seq));
        writeMetaValue(this.index.db, REPLICA_APPLIED_AT_MS, String(last.changedAtMs));
      },
    );
  }

  /** The node's SQLite needs the jurisdictions (BM25 text names them) and each owning organisation's row (a foreign key). */
  async #copyReferencedRows(passages: readonly PostgresPassage[]): Promise<void> {
    const owners = [...new Set(passages.flatMap((p) => (p.ownerOrgId === null ? [] : [p.ownerOrgId])))];
    const organisations = await organisationsByIds(this.sql, owners);
    const jurisdictions = await allJurisdictions(this.sql);
    const { db } = this.index;
    db.transaction(() => {
      upsertJurisdictions(db, jurisdictions);
      for (const o of organisations) {
        db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING").run(
          o.id,
          o.name,
          o.monthly_allowance_pence,
          o.created_at_ms,
        );
      }
    }).immediate();
  }
}

function upsertJurisdictions(db: Database, rows: readonly { slug: string; name: string; description: string }[]): void {
  const upsert = db.query(
    "INSERT INTO jurisdictions (slug, name, description) VALUES (?, ?, ?) ON CONFLICT (slug) DO UPDATE SET name = excluded.name, description = excluded.description",
  );
  for (const j of rows) upsert.run(j.slug, j.name, j.description);
}

/** A passage read from PostgreSQL as indexing takes it (a backup indexes them the same way). */
export function storedPassage(p: PostgresPassage & { vector: Float32Array }): StoredPassage {
  return {
    id: p.id,
    documentId: p.documentId,
    ownerOrgId: p.ownerOrgId,
    position: p.position,
    source: p.source,
    citationPath: p.citationPath,
    heading: p.heading,
    title: p.title,
    content: p.content,
    jurisdictions: p.jurisdictions,
    contentHash: p.contentHash,
    vector: p.vector,
  };
}
