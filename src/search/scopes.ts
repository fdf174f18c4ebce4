/**
 * What one search may see. A shared passage belongs to each of its jurisdictions ("us-ny");
 * an organisation's passage to "org:<orgId>:<slug>" per slug, or "org:<orgId>:*" when its
 * document has no jurisdictions. A search names exactly the scopes it may see; both
 * indexes filter by them inside the search (FTS: scope tokens in the MATCH; vec0: owner
 * partition + jurisdiction metadata column), never by cutting down a global top-k.
 */
import type { Database } from "bun:sqlite";
import { placeholders } from "./sql";

/** Jurisdiction value of an organisation passage whose document applies everywhere. */
export const ANY_JURISDICTION = "*";

/**
 * FTS token standing for a scope: hex, so the tokenizer keeps it whole, and a pure
 * function of the scope, so tokens written by one version match queries of the next.
 */
export function scopeToken(scope: string): string {
  return `z${Buffer.from(scope, "utf8").toString("hex")}`;
}

/**
 * FTS token every organisation passage carries ("org:" is no scope: organisation scopes
 * name the organisation, and slugs have no colon). A search that may read the whole shared
 * corpus excludes the other organisations' passages by it, instead of intersecting with a
 * token every shared passage carries: a third of BM25's time at 100k passages.
 */
export const ORGANISATION_PASSAGE_TOKEN = scopeToken("org:");

export function orgScope(orgId: string, slug: string | "*"): string {
  return `org:${orgId}:${slug}`;
}

export function scopesOfChunk(ownerOrgId: string | null, jurisdictions: readonly string[]): string[] {
  if (ownerOrgId === null) return [...jurisdictions];
  return jurisdictions.length === 0 ? [orgScope(ownerOrgId, "*")] : jurisdictions.map((s) => orgScope(ownerOrgId, s));
}

/** Partitions one search may read: the shared jurisdictions plus the caller's own documents. */
export function scopesOfSearch(orgId: string, jurisdictions: readonly string[]): string[] {
  return [...jurisdictions, ...jurisdictions.map((s) => orgScope(orgId, s)), orgScope(orgId, "*")];
}

/** What one search may read, reduced to what exists in the index. */
export interface SearchScope {
  /** The requested jurisdictions cover every jurisdiction of the shared corpus. */
  allShared: boolean;
  jurisdictions: readonly string[];
  /** The organisation's own scopes that hold passages and that this search may read. */
  orgScopes: string[];
}

export function resolveSearchScope(db: Database, orgId: string, jurisdictions: readonly string[]): SearchScope {
  const requested = new Set(jurisdictions);
  const probe = db.query<{ one: number }, [string]>("SELECT 1 AS one FROM search_chunk_scopes WHERE scope = ? LIMIT 1");
  const others = db
    .query<{ slug: string }, []>("SELECT slug FROM jurisdictions")
    .all()
    .filter((j) => !requested.has(j.slug));
  const allShared = others.every((j) => probe.get(j.slug) === null);
  const prefix = orgScope(orgId, "");
  const orgScopes = db
    .query<{ scope: string }, [string, string]>("SELECT DISTINCT scope FROM search_chunk_scopes WHERE scope >= ? AND scope < ?")
    .all(prefix, `${prefix}\u{10FFFF}`)
    .map((r) => r.scope)
    .filter((scope) => {
      const slug = scope.slice(prefix.length);
      return slug === ANY_JURISDICTION || requested.has(slug);
    });
  return { allShared, jurisdictions, orgScopes };
}

/** Those of the given passages that belong to any of `scopes`. */
export function chunksInScopes(db: Database, ids: readonly number[], scopes: readonly string[]): Set<number> {
  if (ids.length === 0 || scopes.length === 0) return new Set();
  const rows = db
    .query<{ chunk_id: number }, (string | number)[]>(
      `SELECT DISTINCT chunk_id FROM search_chunk_scopes WHERE chunk_id IN (${placeholders(ids.length)}) AND scope IN (${placeholders(scopes.length)})`,
    )
    .all(...ids, ...scopes);
  return new Set(rows.map((r) => r.chunk_id));
}
