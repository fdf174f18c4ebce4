import { byteOrder, forUpdate, type SqlDatabase } from "../db/sql-database";

export interface Organisation {
  id: string;
  name: string;
  monthlyAllowancePence: number;
  createdAtMs: number;
}

export interface ApiKeyRow {
  id: string;
  orgId: string;
  name: string;
  keyHash: string;
  displayPrefix: string;
  createdAtMs: number;
  lastUsedAtMs: number | null;
  revokedAtMs: number | null;
}

export interface Jurisdiction {
  slug: string;
  name: string;
  description: string;
}

// Aliases quoted: PostgreSQL folds unquoted ones to lower case.
const ORG_COLUMNS = `id, name, monthly_allowance_pence AS "monthlyAllowancePence", created_at_ms AS "createdAtMs"`;
const KEY_COLUMNS = `id, org_id AS "orgId", name, key_hash AS "keyHash", display_prefix AS "displayPrefix",
  created_at_ms AS "createdAtMs", last_used_at_ms AS "lastUsedAtMs", revoked_at_ms AS "revokedAtMs"`;

export function insertOrganisation(db: SqlDatabase, org: Organisation): void {
  db.query("INSERT INTO organisations (id, name, monthly_allowance_pence, created_at_ms) VALUES (?, ?, ?, ?)")
    .run(org.id, org.name, org.monthlyAllowancePence, org.createdAtMs);
}

export function findOrganisation(db: SqlDatabase, id: string): Organisation | null {
  return db.query<Organisation, [string]>(`SELECT ${ORG_COLUMNS} FROM organisations WHERE id = ?`).get(id);
}

/**
 * Locks the organisation's row until the transaction ends (PostgreSQL; SQLite's BEGIN IMMEDIATE
 * already excludes other writers), so two nodes replacing its jurisdictions take turns.
 */
export function lockOrganisation(db: SqlDatabase, id: string): boolean {
  return db.query<{ id: string }, [string]>(`SELECT id FROM organisations WHERE id = ?${forUpdate(db)}`).get(id) !== null;
}

export function listOrganisations(db: SqlDatabase, limit: number): Organisation[] {
  return db.query<Organisation, [number]>(`SELECT ${ORG_COLUMNS} FROM organisations ORDER BY created_at_ms, ${byteOrder(db, "id")} LIMIT ?`).all(limit);
}

export function setMonthlyAllowance(db: SqlDatabase, orgId: string, pence: number): void {
  db.query("UPDATE organisations SET monthly_allowance_pence = ? WHERE id = ?").run(pence, orgId);
}

export function replaceOrganisationJurisdictions(db: SqlDatabase, orgId: string, slugs: readonly string[]): void {
  db.query("DELETE FROM organisation_jurisdictions WHERE org_id = ?").run(orgId);
  const insert = db.query("INSERT INTO organisation_jurisdictions (org_id, slug) VALUES (?, ?)");
  for (const slug of slugs) insert.run(orgId, slug);
}

export function listEnabledJurisdictions(db: SqlDatabase, orgId: string): Jurisdiction[] {
  return db.query<Jurisdiction, [string]>(
    `SELECT j.slug, j.name, j.description FROM organisation_jurisdictions oj
     JOIN jurisdictions j ON j.slug = oj.slug WHERE oj.org_id = ? ORDER BY ${byteOrder(db, "j.slug")}`,
  ).all(orgId);
}

export function listJurisdictions(db: SqlDatabase): Jurisdiction[] {
  return db.query<Jurisdiction, []>(`SELECT slug, name, description FROM jurisdictions ORDER BY ${byteOrder(db, "slug")}`).all();
}

export function findUnknownJurisdictions(db: SqlDatabase, slugs: readonly string[]): string[] {
  const known = db.query<{ slug: string }, [string]>("SELECT slug FROM jurisdictions WHERE slug = ?");
  return slugs.filter((slug) => known.get(slug) === null);
}

export function upsertJurisdiction(db: SqlDatabase, j: Jurisdiction): void {
  db.query(
    `INSERT INTO jurisdictions (slug, name, description) VALUES (?, ?, ?)
     ON CONFLICT (slug) DO UPDATE SET name = excluded.name, description = excluded.description`,
  ).run(j.slug, j.name, j.description);
}

export function insertApiKey(db: SqlDatabase, key: ApiKeyRow): void {
  db.query(
    `INSERT INTO api_keys (id, org_id, name, key_hash, display_prefix, created_at_ms, last_used_at_ms, revoked_at_ms)
     VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)`,
  ).run(key.id, key.orgId, key.name, key.keyHash, key.displayPrefix, key.createdAtMs);
}

export function findApiKeyByHash(db: SqlDatabase, keyHash: string): ApiKeyRow | null {
  return db.query<ApiKeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash);
}

export function findApiKey(db: SqlDatabase, id: string): ApiKeyRow | null {
  return db.query<ApiKeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`).get(id);
}

export function listApiKeys(db: SqlDatabase, orgId: string): ApiKeyRow[] {
  return db.query<ApiKeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE org_id = ? ORDER BY created_at_ms DESC, ${byteOrder(db, "id")} DESC`).all(orgId);
}

export function revokeApiKey(db: SqlDatabase, id: string, nowMs: number): boolean {
  return db.query("UPDATE api_keys SET revoked_at_ms = ? WHERE id = ? AND revoked_at_ms IS NULL").run(nowMs, id).changes === 1;
}

export function touchApiKey(db: SqlDatabase, id: string, nowMs: number): void {
  db.query("UPDATE api_keys SET last_used_at_ms = ? WHERE id = ?").run(nowMs, id);
}
