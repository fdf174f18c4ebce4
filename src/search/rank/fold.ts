/**
 * One provision does not fill the page. Passages of the same parent (paragraphs "3–5" and
 * "1–2" of Article 33) that rank close together are folded into one match that shows them
 * all, the best-ranked first, cited as "GDPR > Article 33 (…) > 3–5, 1–2"; a further
 * passage of a provision already shown moves down behind the next provision. A provision
 * the query cites is never folded: the reader asked for exactly it.
 */
import { citationKeysOfPath } from "../citations";
import { PATH_SEPARATOR } from "../corpus/structure";

export interface FoldablePassage {
  chunkId: number;
  documentId: string;
  position: number;
  citationPath: string;
  content: string;
  /** Excluded from folding and never deferred (the query cites it). */
  cited: boolean;
}

export interface FoldedMatch<T extends FoldablePassage> {
  /** The best-ranked passage of the fold, first. */
  passages: T[];
  citationPath: string;
  content: string;
}

/** Passages one match may fold together: its content stays readable. */
export const FOLD_PASSAGES_MAX = 3;

/**
 * Citation keys by citation path: the same paths are folded in reply after reply, and
 * reading their keys (citations.ts) was most of folding's time. At most this many paths of
 * ~100 characters (~2 MB), then it starts over.
 */
const PATH_KEYS_CACHED_MAX = 10_000;
const pathKeys = new Map<string, readonly string[]>();

function keysOfPath(citationPath: string): readonly string[] {
  let keys = pathKeys.get(citationPath);
  if (keys === undefined) {
    keys = citationKeysOfPath(citationPath);
    if (pathKeys.size >= PATH_KEYS_CACHED_MAX) pathKeys.clear();
    pathKeys.set(citationPath, keys);
  }
  return keys;
}

/**
 * The provision whose subdivisions a passage shares with its siblings ("GDPR > Article 33"
 * for "… > 1–2"), or undefined when its parent is no provision: two whole articles under
 * "GDPR" are not siblings to fold.
 */
function parentOf(p: FoldablePassage): string | undefined {
  const segments = p.citationPath.split(PATH_SEPARATOR);
  if (segments.length < 2) return undefined;
  const parent = segments.slice(0, -1).join(PATH_SEPARATOR);
  if (segments.length === 2 && keysOfPath(parent).length === 0) return undefined;
  return `${p.documentId}\n${parent}`;
}

/** The provision a passage belongs to: its citation's base ("article 33", "899-aa"), else its parent. */
function provisionOf(p: FoldablePassage): string {
  const base = keysOfPath(p.citationPath)[0];
  return base !== undefined ? `${p.documentId}\n${base}` : (parentOf(p) ?? `${p.documentId}\n${p.citationPath}`);
}

export interface FoldOptions {
  /**
   * A passage joins its sibling's fold only if it ranks at most this many places below the
   * fold's last passage: a fold compacts neighbours on the page, it never promotes a passage far
   * down the ranking.
   */
  siblingGap: number;
  /** A further passage of a provision already shown moves down this many matches (Infinity: after every other provision). */
  deferBy: number;
}

export function foldRanking<T extends FoldablePassage>(ranked: readonly T[], limit: number, options: FoldOptions): FoldedMatch<T>[] {
  const groups: T[][] = [];
  const openFolds = new Map<string, { group: T[]; lastRank: number }>();
  for (const [rank, p] of ranked.entries()) {
    const parent = p.cited ? undefined : parentOf(p);
    const fold = parent === undefined ? undefined : openFolds.get(parent);
    if (fold !== undefined && fold.group.length < FOLD_PASSAGES_MAX && rank - fold.lastRank <= options.siblingGap) {
      fold.group.push(p);
      fold.lastRank = rank;
      continue;
    }
    const fresh = [p];
    groups.push(fresh);
    if (parent !== undefined) openFolds.set(parent, { group: fresh, lastRank: rank });
  }
  // A repeat of a provision waits behind `deferBy` matches of provisions not yet shown.
  const shown = new Set<string>();
  const out: T[][] = [];
  const waiting: { group: T[]; due: number }[] = [];
  for (const g of groups) {
    const provision = provisionOf(g[0]!);
    if (g[0]!.cited || !shown.has(provision)) {
      out.push(g);
      shown.add(provision);
      while (waiting.length > 0 && waiting[0]!.due <= out.length) out.push(waiting.shift()!.group);
    } else {
      waiting.push({ group: g, due: out.length + options.deferBy });
    }
  }
  return [...out, ...waiting.map((w) => w.group)].slice(0, limit).map(matchOf);
}

/** The best-ranked passage leads (what the reader came for), the rest follow in document order. */
function matchOf<T extends FoldablePassage>(group: T[]): FoldedMatch<T> {
  if (group.length === 1) return { passages: group, citationPath: group[0]!.citationPath, content: group[0]!.content };
  const ordered = [group[0]!, ...group.slice(1).sort((a, b) => a.position - b.position)];
  const segments = ordered[0]!.citationPath.split(PATH_SEPARATOR);
  const labels = ordered.map((p) => p.citationPath.split(PATH_SEPARATOR).at(-1)!);
  return {
    passages: group,
    citationPath: [...segments.slice(0, -1), labels.join(", ")].join(PATH_SEPARATOR),
    content: ordered.map((p) => p.content).join("\n\n"),
  };
}
