/** What a search is asked and what it answers, with the limits on the asking. */
import type { Highlights } from "./rank/highlights";

export const SEARCH_QUERY_CHARS_MAX = 1000;
export const SEARCH_TOP_K_MAX = 50;
export const SEARCH_TOP_K_DEFAULT = 10;
export const SEARCH_JURISDICTIONS_MAX = 200;

export interface SearchRequest {
  orgId: string;
  query: string;
  jurisdictions: string[];
  topK: number;
}

/** "bm25" and "vector" rank by one half alone, for the quality benchmark. */
export type SearchMethod = "hybrid" | "bm25" | "vector";

export interface SearchMatch {
  content: string;
  score: number;
  source?: string;
  citationPath?: string;
  jurisdictionSlugs?: string[];
  /** The provision's title, when it has one. */
  title?: string;
  highlights?: Highlights;
}

/** The page size a request gets: topK within 1..SEARCH_TOP_K_MAX. */
export function pageSize(request: Pick<SearchRequest, "topK">): number {
  return Math.max(1, Math.min(SEARCH_TOP_K_MAX, request.topK));
}
