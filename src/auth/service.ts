import type { Clock } from "../clock";
import { invalidJurisdictions, notFound, unauthorized, validationFailed } from "../errors";
import type { SqlDatabase } from "../db/sql-database";
import { uuidv7 } from "../ids";
import { displayPrefix, generateApiKey, hashApiKey, hashesEqual, isWellFormedKey } from "./keys";
import * as store from "./store";

/** What organisations and API keys use. */
export interface AuthDeps {
  db: SqlDatabase;
  clock: Clock;
}

export interface Authenticated {
  orgId: string;
  keyId: string;
}

/** A key's last-used time is written at most this often, so reads stay reads. */
const LAST_USED_RESOLUTION_MS = 60_000;
export const NAME_LENGTH_MAX = 200;
export const ORGANISATIONS_LIST_MAX = 10_000;

export function createOrganisation(
  deps: AuthDeps,
  input: { name: string; jurisdictions?: readonly string[]; monthlyAllowancePence?: number },
): store.Organisation & { jurisdictions: string[] } {
  const name = input.name.trim();
  if (name.length < 1 || name.length > NAME_LENGTH_MAX) throw validationFailed(`name must be 1 to ${NAME_LENGTH_MAX} characters`);
  const allowance = input.monthlyAllowancePence ?? 0;
  if (!Number.isSafeInteger(allowance) || allowance < 0) throw validationFailed("monthly allowance must be a non-negative integer of pence");
  const org = { id: uuidv7(), name, monthlyAllowancePence: allowance, createdAtMs: deps.clock.nowMs() };
  const jurisdictions = [...new Set(input.jurisdictions ?? [])];
  deps.db.transaction(() => {
    assertKnownJurisdictions(deps, jurisdictions);
    store.insertOrganisation(deps.db, org);
    store.replaceOrganisationJurisdictions(deps.db, org.id, jurisdictions);
  }).immediate();
  return { ...org, jurisdictions };
}

export function setOrganisationJurisdictions(deps: AuthDeps, orgId: string, slugs: readonly string[]): string[] {
  const unique = [...new Set(slugs)];
  deps.db.transaction(() => {
    if (!store.lockOrganisation(deps.db, orgId)) throw notFound(`organisation ${orgId} does not exist`);
    assertKnownJurisdictions(deps, unique);
    store.replaceOrganisationJurisdictions(deps.db, orgId, unique);
  }).immediate();
  return unique.sort();
}

export function requireOrganisation(deps: AuthDeps, orgId: string): store.Organisation {
  const org = store.findOrganisation(deps.db, orgId);
  if (!org) throw notFound(`organisation ${orgId} does not exist`);
  return org;
}

function assertKnownJurisdictions(deps: AuthDeps, slugs: readonly string[]): void {
  const unknown = store.findUnknownJurisdictions(deps.db, slugs);
  if (unknown.length > 0) throw invalidJurisdictions(`unknown jurisdictions: ${unknown.join(", ")}`);
}

/** Creates a key and returns it in full: the only time it is ever visible. */
export function createApiKey(deps: AuthDeps, input: { orgId: string; name?: string }): { id: string; key: string; name: string } {
  const name = (input.name ?? "default").trim();
  if (name.length < 1 || name.length > NAME_LENGTH_MAX) throw validationFailed(`name must be 1 to ${NAME_LENGTH_MAX} characters`);
  requireOrganisation(deps, input.orgId);
  const key = generateApiKey();
  const id = uuidv7();
  store.insertApiKey(deps.db, {
    id,
    orgId: input.orgId,
    name,
    keyHash: hashApiKey(key),
    displayPrefix: displayPrefix(key),
    createdAtMs: deps.clock.nowMs(),
    lastUsedAtMs: null,
    revokedAtMs: null,
  });
  return { id, key, name };
}

/** Revokes a key; `orgId` scopes the call when it comes from an organisation's own user. */
export function revokeApiKey(deps: AuthDeps, keyId: string, orgId?: string): void {
  const key = store.findApiKey(deps.db, keyId);
  if (!key || (orgId !== undefined && key.orgId !== orgId)) throw notFound(`api key ${keyId} does not exist`);
  store.revokeApiKey(deps.db, keyId, deps.clock.nowMs());
}

/** Resolves `Authorization: Bearer rk_live_…` to its organisation, or throws 401. */
export function authenticateApiKey(deps: AuthDeps, authorization: string | undefined): Authenticated {
  // RFC 7235: the scheme is case-insensitive and separated from the credentials by one or more spaces.
  const match = /^bearer +([^\s]+)$/i.exec(authorization ?? "");
  const presented = match?.[1];
  if (!presented || !isWellFormedKey(presented)) throw unauthorized("send Authorization: Bearer rk_live_…");
  const hash = hashApiKey(presented);
  const key = store.findApiKeyByHash(deps.db, hash);
  if (!key || !hashesEqual(key.keyHash, hash) || key.revokedAtMs !== null) throw unauthorized("unknown or revoked API key");
  const nowMs = deps.clock.nowMs();
  if (key.lastUsedAtMs === null || nowMs - key.lastUsedAtMs >= LAST_USED_RESOLUTION_MS) store.touchApiKey(deps.db, key.id, nowMs);
  return { orgId: key.orgId, keyId: key.id };
}
