/**
 * BM25 of an FTS5 MATCH inside one search scope. A narrow scope (one jurisdiction) is best
 * filtered inside the MATCH by its scope tokens (fts-store.ts); a broad one (8 of 52
 * jurisdictions: 43% of the passages at 100k) costs FTS5 an OR of long token lists, 2.5× the
 * unfiltered search. So a broad scope asks FTS5 for a wider ranking of the whole readable
 * corpus (other organisations' passages excluded inside the MATCH, as always) and keeps its
 * members (scope-members.ts): the same passages, scores and order, since a scope token
 * weighs nothing in bm25(). If too few survive while more were ranked, or the index
 * changed meanwhile, the scoped MATCH answers instead.
 */
import { ftsSearch, type FtsHit, type FtsWeights } from "../fts-store";
import { BM25_GENERATION, readMetaValue } from "../meta-store";
import type { SearchScope } from "../scopes";
import type { SearchIndex } from "../search-index";

/** A scope holding at least this share of the passages is filtered after ranking. */
const BROAD_SCOPE_SHARE_MIN = 0.2;
/** The wider ranking holds this many times the limit's expected share of the scope. */
const WIDENING = 3;

export function bm25Within(index: SearchIndex, match: string, scope: SearchScope, weights: FtsWeights, limit: number): FtsHit[] {
  if (scope.allShared || limit <= 0) return ftsSearch(index.db, match, scope, weights, limit);
  const members = index.scopeMembers.of([...scope.jurisdictions, ...scope.orgScopes]);
  if (members === undefined || members.share < BROAD_SCOPE_SHARE_MIN) return ftsSearch(index.db, match, scope, weights, limit);
  const wide = Math.ceil((WIDENING * limit) / Math.min(1, members.share));
  const ranked = ftsSearch(index.db, match, { ...scope, allShared: true }, weights, wide);
  const kept = ranked.filter((h) => members.has(h.chunkId)).slice(0, limit);
  // A write between reading the members and FTS5's ranking could pair a passage with another's scopes.
  const unchanged = readMetaValue(index.db, BM25_GENERATION) === members.generation;
  if (unchanged && (kept.length === limit || ranked.length < wide)) return kept;
  return ftsSearch(index.db, match, scope, weights, limit);
}
