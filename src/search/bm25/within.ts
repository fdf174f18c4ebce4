/**
 * BM25 of an FTS5 MATCH inside search scopes. A narrow scope (one small jurisdiction) is best
 * filtered inside the MATCH by its scope tokens (fts-store.ts); a broad one (8 of 52
 * jurisdictions: 43% of the passages at 100k) costs FTS5 an OR of long token lists, 2.5× the
 * unfiltered search. So a broad scope asks FTS5 for a wider ranking of the whole readable
 * corpus (other organisations' passages excluded inside the MATCH, as always) and keeps its
 * members (scope-members.ts): the same passages, scores and order, since a scope token
 * weighs nothing in bm25(). If too few survive while more were ranked, or the index
 * changed meanwhile, the scoped MATCH answers instead.
 *
 * A search asks for the same MATCH in two scopes when its query names a jurisdiction (its
 * filter, and the named one: candidates.ts). Both are answered from one ranking of the
 * readable corpus, as deep as the deeper needs: FTS5 scores every match whatever the LIMIT,
 * and SQLite keeps the first-found of tied rows, so a shorter ranking is a prefix of a longer.
 */
import { ftsSearch, type FtsHit, type FtsWeights } from "../fts-store";
import { BM25_GENERATION, readMetaValue } from "../meta-store";
import type { SearchScope } from "../scopes";
import type { SearchIndex } from "../search-index";
import type { ScopeMembership } from "./scope-members";

/** A scope holding at least this share of the passages is filtered after ranking. */
const BROAD_SCOPE_SHARE_MIN = 0.2;
/** The wider ranking holds this many times the limit's expected share of the scope. */
const WIDENING = 3;

/** How a scope is answered from the readable corpus's ranking: its first `depth` rows, kept whole or filtered to `members`. */
interface FromRanking {
  scope: SearchScope;
  depth: number;
  members?: ScopeMembership;
}

/** BM25 of `match` inside each of `scopes`, best first; `limit` hits at most each. */
export function bm25WithinEach(index: SearchIndex, match: string, scopes: readonly SearchScope[], weights: FtsWeights, limit: number): FtsHit[][] {
  if (limit <= 0) return scopes.map(() => []);
  const plans = scopes.map((scope) => planOf(index, scope, limit));
  const own = sharedOwnScopes(plans);
  const sharing = plans.filter((p): p is FromRanking => p !== undefined && canShare(p, own));
  const depth = Math.max(0, ...sharing.map((p) => p.depth));
  const ranked = depth === 0 ? [] : ftsSearch(index.db, match, { allShared: true, jurisdictions: [], orgScopes: [...own] }, weights, depth);
  // A write between reading the members and FTS5's ranking could pair a passage with another's scopes.
  const generation = sharing.some((p) => p.members !== undefined) ? readMetaValue(index.db, BM25_GENERATION) : undefined;
  return scopes.map((scope, i) => {
    const plan = plans[i];
    if (plan === undefined) return ftsSearch(index.db, match, scope, weights, limit);
    // Organisation scopes the shared ranking does not read: a ranking of its own.
    if (!sharing.includes(plan)) return bm25Within(index, match, scope, weights, limit);
    if (plan.members === undefined) return ranked.slice(0, limit);
    const members = plan.members;
    const kept = ranked.filter((h) => members.has(h.chunkId)).slice(0, limit);
    if (members.generation === generation && (kept.length === limit || ranked.length < depth)) return kept;
    return ftsSearch(index.db, match, scope, weights, limit);
  });
}

/** BM25 of `match` inside `scope`. */
export function bm25Within(index: SearchIndex, match: string, scope: SearchScope, weights: FtsWeights, limit: number): FtsHit[] {
  return bm25WithinEach(index, match, [scope], weights, limit)[0]!;
}

/** Undefined: the scoped MATCH answers. */
function planOf(index: SearchIndex, scope: SearchScope, limit: number): FromRanking | undefined {
  if (scope.allShared) return { scope, depth: limit };
  const members = index.scopeMembers.of([...scope.jurisdictions, ...scope.orgScopes]);
  if (members === undefined || members.share < BROAD_SCOPE_SHARE_MIN) return undefined;
  return { scope, depth: Math.ceil((WIDENING * limit) / Math.min(1, members.share)), members };
}

/**
 * The organisation scopes the shared ranking reads: a scope kept whole needs exactly its
 * own (the first such sets them); a filtered one only needs its own among them, since its
 * members drop the rest.
 */
function sharedOwnScopes(plans: readonly (FromRanking | undefined)[]): ReadonlySet<string> {
  const whole = plans.find((p) => p !== undefined && p.members === undefined);
  if (whole !== undefined) return new Set(whole.scope.orgScopes);
  return new Set(plans.flatMap((p) => p?.scope.orgScopes ?? []));
}

function canShare(plan: FromRanking, own: ReadonlySet<string>): boolean {
  const mine = new Set(plan.scope.orgScopes);
  if (plan.members === undefined) return mine.size === own.size && [...own].every((s) => mine.has(s));
  return [...mine].every((s) => own.has(s));
}
