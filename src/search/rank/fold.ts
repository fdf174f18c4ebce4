/**
 * One provision does not fill the page. Passages of the same parent (paragraphs "1–2" and
 * "3–5" of Article 33) are folded into one match that shows them all, in document order,
 * cited as "GDPR > Article 33 (…) > 1–2, 3–5"; a further passage of a provision already
 * shown waits until every other provision's first passage has been listed. A provision the
 * query cites is never folded: the reader asked for exactly it.
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

function parentOf(p: FoldablePassage): string | undefined {
  const segments = p.citationPath.split(PATH_SEPARATOR);
  return segments.length < 2 ? undefined : `${p.documentId}\n${segments.slice(0, -1).join(PATH_SEPARATOR)}`;
}

/** The provision a passage belongs to: its citation's base ("article 33", "899-aa"), else its parent. */
function provisionOf(p: FoldablePassage): string {
  const base = citationKeysOfPath(p.citationPath)[0];
  return base !== undefined ? `${p.documentId}\n${base}` : (parentOf(p) ?? `${p.documentId}\n${p.citationPath}`);
}

export function foldRanking<T extends FoldablePassage>(ranked: readonly T[], limit: number): FoldedMatch<T>[] {
  const groups: T[][] = [];
  const groupOfParent = new Map<string, T[]>();
  for (const p of ranked) {
    const parent = p.cited ? undefined : parentOf(p);
    const group = parent === undefined ? undefined : groupOfParent.get(parent);
    if (group !== undefined && group.length < FOLD_PASSAGES_MAX) {
      group.push(p);
      continue;
    }
    const fresh = [p];
    groups.push(fresh);
    if (parent !== undefined && group === undefined) groupOfParent.set(parent, fresh);
  }
  const shown = new Set<string>();
  const first: T[][] = [];
  const deferred: T[][] = [];
  for (const g of groups) {
    const provision = provisionOf(g[0]!);
    if (g[0]!.cited || !shown.has(provision)) first.push(g);
    else deferred.push(g);
    shown.add(provision);
  }
  return [...first, ...deferred].slice(0, limit).map(matchOf);
}

function matchOf<T extends FoldablePassage>(group: T[]): FoldedMatch<T> {
  if (group.length === 1) return { passages: group, citationPath: group[0]!.citationPath, content: group[0]!.content };
  const ordered = [...group].sort((a, b) => a.position - b.position);
  const segments = ordered[0]!.citationPath.split(PATH_SEPARATOR);
  const labels = ordered.map((p) => p.citationPath.split(PATH_SEPARATOR).at(-1)!);
  return {
    passages: group,
    citationPath: [...segments.slice(0, -1), labels.join(", ")].join(PATH_SEPARATOR),
    content: ordered.map((p) => p.content).join("\n\n"),
  };
}
