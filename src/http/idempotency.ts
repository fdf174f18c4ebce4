import { Elysia, StatusMap } from "elysia";
import type { Authenticated } from "../auth/service";
import type { Clock } from "../clock";
import { forUpdate, isRetryableConflict, isUniqueViolation, type SqlDatabase } from "../db/sql-database";
import { immediate } from "../db/transaction";
import { uuidv7 } from "../ids";
import { Refusal, validationFailed } from "../errors";

/**
 * The Idempotency-Key header for POST /v1 routes (decisions.md "Idempotency").
 *
 * Use it after authentication, once per capability plugin:
 *
 *   new Elysia({ prefix: "/v1" })
 *     .use(requireApiKey())
 *     .use(idempotency(deps))
 *     .post("/search", ({ auth, body, operationId }) => …)
 *
 * Every handler then receives `operationId`: a fresh UUIDv7 without the header; with the
 * header, the id fixed when the key was first claimed and reused by any re-execution under
 * that key. Use it as the id of what the request creates (search requestId, run id,
 * document id) AND derive the request's ledger keys from it (`search:<operationId>`,
 * `reserve:<runId>` with runId = operationId). That is what makes a retry after a crash
 * safe: the ledger's unique keys return the entry already written instead of charging again.
 * A create that is not naturally idempotent should look for an existing resource with that
 * id first.
 *
 * Guarantees, per organisation and key, for at least 24 hours after the key is first used:
 * - same key, same request (method, route and canonical body: key order, whitespace,
 *   defaults and stripped unknown fields do not matter; files compare by content) after a
 *   2xx → the stored status and body, byte for byte, with `Idempotent-Replayed: true`; the
 *   handler does not run again, so nothing is charged again;
 * - same key, different request → 409 idempotency_key_reused;
 * - same key while the first request is still running → waits up to IN_FLIGHT_WAIT_MS for it,
 *   then replays its response; still running after that → 409 idempotency_key_reused with
 *   Retry-After;
 * - a request that ended in an error (4xx/5xx) stores nothing: a retry with the same body runs
 *   again under the same operationId (so a 402 can be retried after a top-up);
 * - the process dies mid-request → the key's claim lapses after IN_FLIGHT_LEASE_MS and a retry
 *   runs again under the same operationId; money written by the first attempt under keys
 *   derived from operationId is found, not written twice.
 * Only 2xx responses up to RESPONSE_BYTES_MAX are stored. Requests failing validation or
 * authentication never reach the key.
 *
 * Callers outside an Elysia route (an MCP tool call, src/mcp/) get the same guarantees from
 * claimIdempotencyKey, finishIdempotentRequest and releaseIdempotencyKey.
 */

export const IDEMPOTENCY_KEY_LENGTH_MAX = 255;
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** How long a claim survives without its request finishing: the recovery delay after a crash. */
export const IN_FLIGHT_LEASE_MS = 60_000;
/** How long a duplicate waits for the in-flight original before giving up with 409. */
export const IN_FLIGHT_WAIT_MS = 10_000;
const IN_FLIGHT_POLL_MS = 10;
export const RESPONSE_BYTES_MAX = 1024 * 1024;
/** Nesting bound for body canonicalisation (bodies are already schema-validated). */
const BODY_DEPTH_MAX = 64;
const KEY_PATTERN = /^[\x20-\x7E]+$/;

/** What the key's records use: any handle, SQLite's or PostgreSQL's (src/db/sql-database.ts). */
export interface IdempotencyDeps {
  db: SqlDatabase;
  clock: Clock;
}

/** Runs of one claim at most: each retry follows a race another node's claim of the key won. */
const CLAIM_ATTEMPTS_MAX = 5;

export interface IdempotencyOptions {
  leaseMs?: number;
  waitMs?: number;
}

interface StoredRow {
  requestHash: string;
  operationId: string;
  ownerToken: string | null;
  lockedUntilMs: number;
  responseStatus: number | null;
  responseContentType: string | null;
  responseBody: string | null;
  expiresAtMs: number;
}

type ClaimOutcome =
  | { kind: "claimed"; operationId: string }
  | { kind: "replay"; status: number; contentType: string; body: string }
  | { kind: "mismatch" }
  | { kind: "busy" };

/** The header as an OpenAPI parameter, for every POST route's `detail.parameters`. */
export const IDEMPOTENCY_KEY_PARAMETER = {
  name: "Idempotency-Key",
  in: "header" as const,
  required: false,
  description:
    "Retry-safe key (1–255 printable ASCII characters), scoped to the organisation and kept 24 hours. The same key with the " +
    "same request replays the stored response (Idempotent-Replayed: true) and is never charged twice; another body gets 409 " +
    "idempotency_key_reused.",
  schema: { type: "string" as const, minLength: 1, maxLength: IDEMPOTENCY_KEY_LENGTH_MAX },
};

export function idempotency(deps: IdempotencyDeps, options: IdempotencyOptions = {}) {
  const claims = new WeakMap<Request, IdempotencyClaim>();
  const replays = new WeakSet<Request>();

  return new Elysia()
    .onBeforeHandle({ as: "scoped" }, async (ctx) => {
      const { request } = ctx;
      if (request.method !== "POST") return;
      const key = request.headers.get("idempotency-key");
      if (key === null) return;
      if (!isIdempotencyKey(key)) {
        throw validationFailed(`header.idempotency-key: must be 1 to ${IDEMPOTENCY_KEY_LENGTH_MAX} printable ASCII characters`);
      }
      const auth = (ctx as { auth?: Authenticated }).auth;
      if (!auth) throw new Error("idempotency() must be used after requireApiKey()");
      const outcome = await claimIdempotencyKey(deps, { orgId: auth.orgId, key, method: request.method, route: ctx.route, body: ctx.body }, options);
      if (outcome.kind === "claimed") {
        claims.set(request, outcome.claim);
        return;
      }
      replays.add(request);
      return new Response(outcome.body, {
        status: outcome.status,
        headers: { "content-type": outcome.contentType, "idempotent-replayed": "true" },
      });
    })
    .resolve({ as: "scoped" }, ({ request }) => ({ operationId: claims.get(request)?.operationId ?? uuidv7() }))
    .onAfterHandle({ as: "scoped" }, async ({ request, response, set }) => {
      const held = claims.get(request);
      if (!held || replays.has(request)) return;
      const stored = await storableResponse(response, set.status);
      if (stored) finishIdempotentRequest(deps, held, stored);
    })
    .onAfterResponse({ as: "scoped" }, ({ request }) => {
      const held = claims.get(request);
      // Errors and unstorable responses leave no result: free the key for a retry at once.
      if (held) releaseIdempotencyKey(deps, held);
    });
}

/** 1 to IDEMPOTENCY_KEY_LENGTH_MAX printable ASCII characters. */
export function isIdempotencyKey(key: string): boolean {
  return key.length >= 1 && key.length <= IDEMPOTENCY_KEY_LENGTH_MAX && KEY_PATTERN.test(key);
}

/** One request under a key: `route` and `body` (validated, defaults applied) decide whether a retry is "the same request". */
export interface IdempotentRequest {
  orgId: string;
  key: string;
  method: string;
  route: string;
  body: unknown;
}

/** A key this request holds: run the work under `operationId`, then finish or release it. */
export interface IdempotencyClaim {
  orgId: string;
  key: string;
  operationId: string;
  ownerToken: string;
  finished: boolean;
}

export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

/**
 * Takes the key for this request (the guarantees above), waiting up to `waitMs` for an
 * in-flight duplicate. Replays a stored response; throws 409 idempotency_key_reused for
 * another request under the key, or for one still in flight after the wait. The caller
 * validates the key first (isIdempotencyKey) and must finish or release a claim.
 */
export async function claimIdempotencyKey(
  deps: IdempotencyDeps,
  request: IdempotentRequest,
  options: IdempotencyOptions = {},
): Promise<{ kind: "claimed"; claim: IdempotencyClaim } | ({ kind: "replay" } & StoredResponse)> {
  const leaseMs = options.leaseMs ?? IN_FLIGHT_LEASE_MS;
  const waitMs = options.waitMs ?? IN_FLIGHT_WAIT_MS;
  const { orgId, key } = request;
  const requestHash = await hashRequest(request.method, request.route, request.body);
  const ownerToken = uuidv7();
  const deadline = performance.now() + waitMs;
  for (;;) {
    const outcome = claim(deps, leaseMs, { orgId, key, requestHash, ownerToken });
    if (outcome.kind === "claimed") return { kind: "claimed", claim: { orgId, key, operationId: outcome.operationId, ownerToken, finished: false } };
    if (outcome.kind === "replay") return outcome;
    if (outcome.kind === "mismatch") {
      throw new Refusal("idempotency_key_reused", "this Idempotency-Key was used with a different request; use a new key");
    }
    if (performance.now() >= deadline) {
      throw new Refusal("idempotency_key_reused", "a request with this Idempotency-Key is still in flight; retry after it completes", {
        "retry-after": "1",
      });
    }
    // Wait with plain reads; only try to claim again once the holder is gone.
    do await Bun.sleep(IN_FLIGHT_POLL_MS);
    while (performance.now() < deadline && isHeld(findRow(deps.db, orgId, key), requestHash, deps.clock.nowMs()));
  }
}

/** Stores the claimed request's 2xx response, which every later retry under the key replays. */
export function finishIdempotentRequest(deps: IdempotencyDeps, held: IdempotencyClaim, stored: StoredResponse): void {
  if (stored.status < 200 || stored.status > 299 || Buffer.byteLength(stored.body) > RESPONSE_BYTES_MAX) return;
  held.finished = true;
  deps.db
    .query(
      `UPDATE idempotency_keys SET response_status = ?, response_content_type = ?, response_body = ?,
         owner_token = NULL, locked_until_ms = 0, expires_at_ms = ?
       WHERE org_id = ? AND key = ? AND owner_token = ?`,
    )
    .run(stored.status, stored.contentType, stored.body, deps.clock.nowMs() + IDEMPOTENCY_RETENTION_MS, held.orgId, held.key, held.ownerToken);
}

/** Frees a claim that stored no response, so a retry runs at once (under the same operation id). */
export function releaseIdempotencyKey(deps: IdempotencyDeps, held: IdempotencyClaim): void {
  if (held.finished) return;
  deps.db
    .query("UPDATE idempotency_keys SET owner_token = NULL, locked_until_ms = 0 WHERE org_id = ? AND key = ? AND owner_token = ?")
    .run(held.orgId, held.key, held.ownerToken);
}

interface ClaimInput {
  orgId: string;
  key: string;
  requestHash: string;
  ownerToken: string;
}

/**
 * claimOnce, run again when it lost a race on PostgreSQL (another node inserted the key
 * first, a deadlock, a serialisation failure): the rerun finds the winner's row, so the
 * result is the one SQLite gives, where BEGIN IMMEDIATE makes claims take turns.
 */
function claim(deps: IdempotencyDeps, leaseMs: number, input: ClaimInput): ClaimOutcome {
  for (let attempt = 1; ; attempt++) {
    try {
      return claimOnce(deps, leaseMs, input);
    } catch (error) {
      const conflict = isRetryableConflict(error) || isUniqueViolation(error);
      if (deps.db.inTransaction || !conflict || attempt >= CLAIM_ATTEMPTS_MAX) throw error;
    }
  }
}

/** One immediate transaction: read (and lock) the key's row and take it, replay it, or report why not. */
function claimOnce(deps: IdempotencyDeps, leaseMs: number, input: ClaimInput): ClaimOutcome {
  const db = deps.db;
  return immediate(db, (): ClaimOutcome => {
    const nowMs = deps.clock.nowMs();
    let row = findRow(db, input.orgId, input.key, forUpdate(db));
    if (row && row.expiresAtMs <= nowMs) {
      db.query("DELETE FROM idempotency_keys WHERE org_id = ? AND key = ?").run(input.orgId, input.key);
      row = null;
    }
    if (!row) {
      const operationId = uuidv7();
      db.query(
        `INSERT INTO idempotency_keys (org_id, key, request_hash, operation_id, owner_token, locked_until_ms, created_at_ms, expires_at_ms)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(input.orgId, input.key, input.requestHash, operationId, input.ownerToken, nowMs + leaseMs, nowMs, nowMs + IDEMPOTENCY_RETENTION_MS);
      return { kind: "claimed", operationId };
    }
    if (row.requestHash !== input.requestHash) return { kind: "mismatch" };
    if (row.responseStatus !== null) {
      return { kind: "replay", status: row.responseStatus, contentType: row.responseContentType ?? "application/json", body: row.responseBody ?? "" };
    }
    if (isHeld(row, input.requestHash, nowMs)) return { kind: "busy" };
    // Free (the last attempt failed) or abandoned (its process died): run again under the same operation id.
    db.query("UPDATE idempotency_keys SET owner_token = ?, locked_until_ms = ? WHERE org_id = ? AND key = ?").run(
      input.ownerToken,
      nowMs + leaseMs,
      input.orgId,
      input.key,
    );
    return { kind: "claimed", operationId: row.operationId };
  });
}

function isHeld(row: StoredRow | null, requestHash: string, nowMs: number): boolean {
  return row !== null && row.requestHash === requestHash && row.responseStatus === null && row.ownerToken !== null && row.lockedUntilMs > nowMs && row.expiresAtMs > nowMs;
}

/** `lock` is forUpdate(db) inside a claim: another node's claim of the key waits for this one to end. */
function findRow(db: SqlDatabase, orgId: string, key: string, lock = ""): StoredRow | null {
  return db
    .query<StoredRow, [string, string]>(
      `SELECT request_hash AS "requestHash", operation_id AS "operationId", owner_token AS "ownerToken",
         locked_until_ms AS "lockedUntilMs", response_status AS "responseStatus",
         response_content_type AS "responseContentType", response_body AS "responseBody", expires_at_ms AS "expiresAtMs"
       FROM idempotency_keys WHERE org_id = ? AND key = ?${lock}`,
    )
    .get(orgId, key);
}

/** Deletes keys past their retention, oldest first, at most `batchMax` per call. Returns how many. */
export function purgeExpiredIdempotencyKeys(db: SqlDatabase, nowMs: number, batchMax = 10_000): number {
  return db
    .query(
      `DELETE FROM idempotency_keys WHERE (org_id, key) IN (
         SELECT org_id, key FROM idempotency_keys WHERE expires_at_ms <= ? ORDER BY expires_at_ms LIMIT ?)`,
    )
    .run(nowMs, batchMax).changes;
}

/** The handler's result as it will go on the wire, when it is a 2xx small enough to keep. */
async function storableResponse(response: unknown, setStatus: number | keyof typeof StatusMap | undefined): Promise<StoredResponse | null> {
  let status = typeof setStatus === "number" ? setStatus : setStatus ? StatusMap[setStatus] : 200;
  let value = response;
  if (isCustomStatus(value)) {
    status = value.code;
    value = value.response;
  }
  let contentType = "application/json";
  let body: string;
  if (value instanceof Response) {
    status = value.status;
    contentType = value.headers.get("content-type") ?? "application/octet-stream";
    body = await value.clone().text();
  } else if (typeof value === "string") {
    contentType = "text/plain;charset=utf-8";
    body = value;
  } else {
    body = JSON.stringify(value ?? null);
  }
  if (status < 200 || status > 299 || Buffer.byteLength(body) > RESPONSE_BYTES_MAX) return null;
  return { status, contentType, body };
}

function isCustomStatus(value: unknown): value is { code: number; response: unknown } {
  return typeof value === "object" && value !== null && value.constructor?.name === "ElysiaCustomStatusResponse";
}

/** SHA-256 over method, route and a canonical form of the validated body. */
async function hashRequest(method: string, route: string, body: unknown): Promise<string> {
  const hasher = new Bun.CryptoHasher("sha256");
  hasher.update(`${method} ${route}\n`);
  hasher.update(JSON.stringify(await canonical(body, 0)));
  return hasher.digest("hex");
}

/** Sorted object keys; files by name, type, size and content hash; FormData as sorted entries. */
async function canonical(value: unknown, depth: number): Promise<unknown> {
  if (depth > BODY_DEPTH_MAX) throw validationFailed(`body: nested deeper than ${BODY_DEPTH_MAX} levels`);
  if (value instanceof Blob) {
    const sha256 = new Bun.CryptoHasher("sha256").update(await value.arrayBuffer()).digest("hex");
    return { $file: { name: value instanceof File ? value.name : null, type: value.type, size: value.size, sha256 } };
  }
  if (value instanceof FormData) {
    const entries: [string, unknown][] = [];
    for (const [name, part] of value.entries()) entries.push([name, await canonical(part, depth + 1)]);
    return { $form: entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) out.push(await canonical(item, depth + 1));
    return out;
  }
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = await canonical((value as Record<string, unknown>)[k], depth + 1);
    return out;
  }
  return value ?? null;
}
