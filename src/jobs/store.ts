import { forUpdate, isPostgres, type SqlDatabase } from "../db/sql-database";
import type { Run, RunStatus } from "./types";
import { announceRun } from "./wake-ups";

/** Bound on a run's JSON input, so one request cannot bloat the table. */
export const RUN_INPUT_BYTES_MAX = 1024 * 1024;
/** Bound on a run's JSON output (100 keywords × 20 matches of passage text fits easily). */
export const RUN_OUTPUT_BYTES_MAX = 32 * 1024 * 1024;
export const RUN_ERROR_LENGTH_MAX = 2000;

interface RunRow {
  id: string;
  org_id: string;
  kind: string;
  status: RunStatus;
  input_json: string;
  output_json: string | null;
  error: string | null;
  attempts: number;
  lease_owner: string | null;
  lease_expires_at_ms: number | null;
  created_at_ms: number;
  started_at_ms: number | null;
  completed_at_ms: number | null;
}

function toRun(row: RunRow): Run {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    status: row.status,
    input: JSON.parse(row.input_json),
    output: row.output_json === null ? null : JSON.parse(row.output_json),
    error: row.error,
    attempts: row.attempts,
    createdAtMs: row.created_at_ms,
    startedAtMs: row.started_at_ms,
    completedAtMs: row.completed_at_ms,
  };
}

/**
 * Inserts a pending run. Call it inside the caller's transaction, next to the ledger
 * reserve or charge, so the hold and the run exist together or not at all; then call
 * `deps.jobs.wake(kind)` after the commit. On PostgreSQL the commit also wakes other
 * nodes' engines (announceRun).
 */
export function createRun(
  db: SqlDatabase,
  run: { id: string; orgId: string; kind: string; input: unknown; createdAtMs: number },
): void {
  const inputJson = JSON.stringify(run.input);
  if (inputJson === undefined || Buffer.byteLength(inputJson) > RUN_INPUT_BYTES_MAX) {
    throw new Error(`run input must be JSON of at most ${RUN_INPUT_BYTES_MAX} bytes`);
  }
  db.query(
    `INSERT INTO runs (id, org_id, kind, status, input_json, created_at_ms) VALUES (?, ?, ?, 'pending', ?, ?)`,
  ).run(run.id, run.orgId, run.kind, inputJson, run.createdAtMs);
  announceRun(db, run.kind);
}

/** The run with this id, only when it belongs to `orgId` and is of `kind` (anything else reads as missing). */
export function findRun(db: SqlDatabase, query: { id: string; orgId: string; kind: string }): Run | undefined {
  const row = db
    .query<RunRow, [string, string, string]>(`SELECT * FROM runs WHERE id = ? AND org_id = ? AND kind = ?`)
    .get(query.id, query.orgId, query.kind);
  return row ? toRun(row) : undefined;
}

export function getRunById(db: SqlDatabase, id: string): Run | undefined {
  const row = db.query<RunRow, [string]>(`SELECT * FROM runs WHERE id = ?`).get(id);
  return row ? toRun(row) : undefined;
}

/** Stands for "no cap" in the claim's SQL: more runs than any engine can have in progress. */
const NO_CAP = 2 ** 31;

// Parameters: ?1 kind, ?2 owner, ?3 lease expiry, ?4 now, ?5 cap. Numbered, as the PostgreSQL handle takes them.
const claimCandidates = (materialized: string) => `WITH RECURSIVE
     -- Organisations with a run waiting: one index seek each, however long their queues.
     waiting(org_id) AS (
       SELECT (SELECT min(org_id) FROM runs WHERE kind = ?1 AND status = 'pending')
       UNION ALL
       SELECT (SELECT min(org_id) FROM runs WHERE kind = ?1 AND status = 'pending' AND org_id > waiting.org_id)
         FROM waiting WHERE waiting.org_id IS NOT NULL),
     candidates AS ${materialized}(
       SELECT org_id,
              (SELECT count(*) FROM runs WHERE kind = ?1 AND status = 'running' AND org_id = waiting.org_id) AS running,
              coalesce((SELECT turn FROM run_turns WHERE kind = ?1 AND org_id = waiting.org_id), 0) AS turn,
              (SELECT min(created_at_ms) FROM runs WHERE kind = ?1 AND status = 'pending' AND org_id = waiting.org_id) AS oldest_ms
         FROM waiting WHERE org_id IS NOT NULL)
   UPDATE runs
      SET status = 'running', attempts = attempts + 1, lease_owner = ?2, lease_expires_at_ms = ?3, started_at_ms = ?4
    WHERE id = `;

/** SQLite: BEGIN IMMEDIATE holds the one write lock, so the first choice is always free to take. */
const CLAIM_SQLITE = `${claimCandidates("")}(
            SELECT id FROM runs
             WHERE kind = ?1 AND status = 'pending'
               AND org_id = (SELECT org_id FROM candidates WHERE running < ?5 ORDER BY running, turn, oldest_ms, org_id LIMIT 1)
             ORDER BY created_at_ms, id
             LIMIT 1)
      AND status = 'pending'
    RETURNING *`;

/**
 * Organisations, and runs of each, the PostgreSQL claim ranks, so its cost does not grow with
 * the queue. A node claims one run at a time, so each other node's claim in flight locks at
 * most one run: with a few nodes, the window is all taken only when its runs were all taken
 * during this very claim (the tail of a queue).
 */
const CLAIM_WINDOW = 16;

/**
 * PostgreSQL: claims on other nodes run at the same time. The same order over the oldest
 * waiting runs of the first candidate organisations, skipping the runs another claim has
 * locked (it is taking them), so no claim waits for another and none comes back empty while
 * a free run waits in its window. A run another node claimed and committed since
 * this statement's snapshot is re-checked when locked (no longer pending) and skipped too.
 * The candidates are MATERIALIZED: inlined, their counts would be computed again per run.
 */
const CLAIM_POSTGRES = `${claimCandidates("MATERIALIZED ")}(
            SELECT r.id
              FROM (SELECT * FROM candidates WHERE running < ?5
                     ORDER BY running, turn, oldest_ms, org_id LIMIT ${CLAIM_WINDOW}) c
              CROSS JOIN LATERAL (SELECT id FROM runs WHERE kind = ?1 AND status = 'pending' AND org_id = c.org_id
                                   ORDER BY created_at_ms, id LIMIT ${CLAIM_WINDOW}) w
              JOIN runs r ON r.id = w.id
             WHERE r.status = 'pending'
             ORDER BY c.running, c.turn, c.oldest_ms, c.org_id, r.created_at_ms, r.id
             LIMIT 1
               FOR UPDATE OF r SKIP LOCKED)
      AND status = 'pending'
    RETURNING *`;

/**
 * Atomically takes the next pending run of `kind` and leases it to `owner`, fairly between
 * organisations: among those with a run waiting and fewer than `perOrganisationMax` (0: no
 * cap) in progress, the one with the fewest in progress, then the one whose last claim of
 * this kind is oldest (run_turns), then the oldest waiting run; then that organisation's
 * oldest pending run. Counts cover every worker sharing the database. Call it outside any
 * transaction: it takes the write lock itself (SQLite) or locks the run it takes, skipping
 * runs other nodes are claiming (PostgreSQL), so two workers never claim one run.
 */
export function claimNextRun(
  db: SqlDatabase,
  claim: { kind: string; owner: string; nowMs: number; leaseMs: number; perOrganisationMax?: number },
): Run | undefined {
  const cap = claim.perOrganisationMax && claim.perOrganisationMax > 0 ? claim.perOrganisationMax : NO_CAP;
  const sql = isPostgres(db) ? CLAIM_POSTGRES : CLAIM_SQLITE;
  return db
    .transaction(() => {
      const row = db
        .query<RunRow, [string, string, number, number, number]>(sql)
        .get(claim.kind, claim.owner, claim.nowMs + claim.leaseMs, claim.nowMs, cap);
      if (!row) return undefined;
      db.query<unknown, [string, string]>(
        `INSERT INTO run_turns (kind, org_id, turn)
         VALUES (?1, ?2, (SELECT coalesce(max(turn), 0) + 1 FROM run_turns WHERE kind = ?1))
         ON CONFLICT (kind, org_id) DO UPDATE SET turn = excluded.turn`,
      ).run(claim.kind, row.org_id);
      return toRun(row);
    })
    .immediate();
}

/** Extends every lease `owner` holds; returns the ids it still holds. */
export function renewLeases(db: SqlDatabase, owner: string, leaseExpiresAtMs: number): Set<string> {
  const rows = db
    .query<{ id: string }, [number, string]>(
      `UPDATE runs SET lease_expires_at_ms = ? WHERE lease_owner = ? AND status = 'running' RETURNING id`,
    )
    .all(leaseExpiresAtMs, owner);
  return new Set(rows.map((r) => r.id));
}

/** Marks a run completed if `owner` still holds it; false means the lease was lost. */
export function markCompleted(db: SqlDatabase, id: string, owner: string, outputJson: string, nowMs: number): boolean {
  return (
    db
      .query(
        `UPDATE runs SET status = 'completed', output_json = ?, completed_at_ms = ?, lease_owner = NULL, lease_expires_at_ms = NULL
          WHERE id = ? AND status = 'running' AND lease_owner = ?`,
      )
      .run(outputJson, nowMs, id, owner).changes === 1
  );
}

/** Marks a run failed if `owner` still holds it; false means the lease was lost. */
export function markFailed(db: SqlDatabase, id: string, owner: string, error: string, nowMs: number): boolean {
  return (
    db
      .query(
        `UPDATE runs SET status = 'failed', error = ?, completed_at_ms = ?, lease_owner = NULL, lease_expires_at_ms = NULL
          WHERE id = ? AND status = 'running' AND lease_owner = ?`,
      )
      .run(error.slice(0, RUN_ERROR_LENGTH_MAX), nowMs, id, owner).changes === 1
  );
}

/**
 * Puts a run back to pending if `owner` still holds it. `refundAttempt` undoes the
 * claim's count when the attempt was interrupted on purpose (graceful shutdown).
 */
export function returnToPending(db: SqlDatabase, id: string, owner: string, refundAttempt: boolean): boolean {
  return (
    db
      .query(
        `UPDATE runs SET status = 'pending', lease_owner = NULL, lease_expires_at_ms = NULL,
                attempts = CASE WHEN ? = 1 AND attempts > 0 THEN attempts - 1 ELSE attempts END
          WHERE id = ? AND status = 'running' AND lease_owner = ?`,
      )
      .run(refundAttempt ? 1 : 0, id, owner).changes === 1
  );
}

export interface LeasedRun {
  id: string;
  leaseOwner: string;
  leaseExpiresAtMs: number;
  attempts: number;
}

/** Running runs of `kind` leased to anyone but `owner` (few: bounded by workers × concurrency). */
export function listOthersLeases(db: SqlDatabase, kind: string, owner: string): LeasedRun[] {
  return db
    .query<LeasedRun, [string, string]>(
      `SELECT id, lease_owner AS "leaseOwner", lease_expires_at_ms AS "leaseExpiresAtMs", attempts
         FROM runs WHERE kind = ? AND status = 'running' AND lease_owner <> ?`,
    )
    .all(kind, owner);
}

/** Unfinished runs by kind and status, for the queue-depth gauge. */
export function countUnfinished(db: SqlDatabase): { kind: string; status: RunStatus; count: number }[] {
  return db
    .query<{ kind: string; status: RunStatus; count: number }, []>(
      `SELECT kind, status, count(*) AS count FROM runs WHERE status IN ('pending', 'running') GROUP BY kind, status`,
    )
    .all();
}

/**
 * True when the run is still running under exactly this lease (same owner, same expiry).
 * Inside a transaction on PostgreSQL it also locks the run, so its owner cannot renew the
 * lease between this check and the take-over that follows.
 */
export function leaseUnchanged(db: SqlDatabase, lease: LeasedRun): boolean {
  const row = db
    .query<{ ok: number }, [string, string, number]>(
      `SELECT 1 AS ok FROM runs WHERE id = ? AND status = 'running' AND lease_owner = ? AND lease_expires_at_ms = ?${forUpdate(db)}`,
    )
    .get(lease.id, lease.leaseOwner, lease.leaseExpiresAtMs);
  return row !== null;
}
