/**
 * SQL for BM25 (search_fts, FTS5, contentless; rowid = search_chunks.id): three weighted
 * columns of text and a fourth of scope tokens (scopes.ts) that filters inside the MATCH.
 */
import type { Database } from "bun:sqlite";
import { bumpBm25Generation } from "./meta-store";
import { ORGANISATION_PASSAGE_TOKEN, scopesOfChunk, scopeToken, type SearchScope } from "./scopes";

export interface FtsText {
  citation: string;
  heading: string;
  body: string;
}

export interface FtsHit {
  chunkId: number;
  /** FTS5 bm25(): negative, lower is better. */
  bm25: number;
}

export interface FtsWeights {
  citation: number;
  heading: number;
  body: number;
}

export function insertFtsRow(db: Database, chunkId: number, ownerOrgId: string | null, jurisdictions: readonly string[], fts: FtsText): void {
  const tokens = scopesOfChunk(ownerOrgId, jurisdictions).map(scopeToken);
  if (ownerOrgId !== null) tokens.push(ORGANISATION_PASSAGE_TOKEN);
  db.query("INSERT INTO search_fts (rowid, citation, heading, body, scopes) VALUES (?, ?, ?, ?, ?)").run(
    chunkId,
    fts.citation,
    fts.heading,
    fts.body,
    tokens.join(" "),
  );
  bumpBm25Generation(db);
}

export function deleteFtsRow(db: Database, chunkId: number): void {
  db.query("DELETE FROM search_fts WHERE rowid = ?").run(chunkId);
  bumpBm25Generation(db);
}

/**
 * BM25 over the passages of a search scope, filtered inside the MATCH, so FTS5 never scores
 * a passage the caller may not see (weight 0 keeps scope tokens out of the score). A search
 * of the whole shared corpus excludes organisation passages other than its own readable
 * ones; any other search requires one of its scope tokens.
 */
export function ftsSearch(db: Database, match: string, scope: SearchScope, weights: FtsWeights, limit: number): FtsHit[] {
  const own = scope.orgScopes.map(scopeToken);
  let within: string;
  if (scope.allShared) {
    within = `NOT scopes : (${ORGANISATION_PASSAGE_TOKEN}${own.length === 0 ? "" : ` NOT (${own.join(" OR ")})`})`;
  } else {
    const tokens = [...scope.jurisdictions.map(scopeToken), ...own];
    if (tokens.length === 0) return [];
    within = `AND scopes : (${tokens.join(" OR ")})`;
  }
  return db
    .query<FtsHit, (string | number)[]>(
      `SELECT rowid AS chunkId, bm25(search_fts, ?, ?, ?, 0) AS bm25
       FROM search_fts WHERE search_fts MATCH ? ORDER BY bm25 LIMIT ?`,
    )
    .all(weights.citation, weights.heading, weights.body, `(${match}) ${within}`, limit);
}

/** Merges the BM25 index's segments into one (FTS5 'optimize'). */
export function mergeFtsSegments(db: Database): void {
  db.run("INSERT INTO search_fts (search_fts) VALUES ('optimize')");
}

/** Passages containing `term`, counting no further than `cap` (so a common term costs at most cap rows). */
export function termDocCount(db: Database, term: string, cap: number): number {
  return db
    .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM (SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT ?)")
    .get(`"${term.replace(/['"’]/g, " ")}"`, cap)!.n;
}
