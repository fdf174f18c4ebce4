/**
 * Provisions (an article, a section) as wholes: every passage of one, found by its citation
 * key, and the index of a jurisdiction's provisions. A provision is the passages of one
 * instrument (document) that share a base citation key ("article 33", "899-aa", "1003.4").
 * Free reads, no billing; the caller passes the scopes the organisation may read.
 */
import type { Database } from "bun:sqlite";
import { notFound, validationFailed } from "../errors";
import { citationsInQuery } from "./citations";
import { PATH_SEPARATOR } from "./corpus/structure";
import { jurisdictionNames, type ChunkRow } from "./chunk-store";
import { orgScope, scopesOfSearch } from "./scopes";

/** Passages one provision may return: the largest in the sample corpus has 11. */
export const PROVISION_PASSAGES_MAX = 200;
/** Provisions one jurisdiction's index lists. */
export const PROVISION_INDEX_MAX = 2_000;
const CANDIDATE_ROWS_MAX = 2_000;
const CITATION_ECHO_CHARS_MAX = 200;

export interface ProvisionPassage {
  content: string;
  source: string;
  citationPath: string;
  jurisdictionSlugs: string[];
  /** The provision's title, where the index keeps one. */
  title?: string;
}

export interface Provision {
  /** The provision as cited: "GDPR Article 33", "12 CFR 1003.4(a)", "N.Y. Gen. Bus. Law § 899-aa". */
  citation: string;
  source: string;
  heading: string;
  jurisdictionSlugs: string[];
  /** In document order. */
  passages: ProvisionPassage[];
}

export interface ProvisionIndexEntry {
  /** What to pass to findProvision (get_provision) to read it. */
  citation: string;
  heading: string;
  source: string;
  passages: number;
}

/** Words of a citation that name neither the provision nor the instrument. */
const FILLER_WORDS = new Set(["article", "articles", "art", "section", "sections", "sec", "s", "ss", "of", "the", "and", "in", "under", "para", "paragraph", "subsection"]);

function normaliseDashes(text: string): string {
  return text.replace(/[‐-―−]/g, "-");
}

function words(text: string): string[] {
  return normaliseDashes(text).toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * The provision's own citation, read from a passage's path: the path up to and including the
 * base key, segments joined by spaces ("GDPR > Article 33 (…) > 1–2" → "GDPR Article 33").
 * A title shown after the key is left out.
 */
export function provisionCitation(citationPath: string, baseKey: string): string {
  const segments = citationPath.split(PATH_SEPARATOR);
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(baseKey).replace(/ /g, "\\s+")}(?![\\p{L}\\p{N}])`, "iu");
  for (let i = 0; i < Math.min(2, segments.length); i++) {
    // Dashes are normalised one character for one, so the match's offsets hold in the original.
    const match = pattern.exec(normaliseDashes(segments[i]!));
    if (match) return [...segments.slice(0, i), segments[i]!.slice(0, match.index + match[0].length)].join(" ");
  }
  return segments[0]!;
}

/**
 * Every passage of the provision `citation` names, in document order, among those the
 * organisation may read in `jurisdictions` (its enabled ones): the shared corpus's and its
 * own documents'. The citation is a provision ("Article 33", "§ 899-aa", "1003.4(a)") and,
 * optionally, words naming the instrument ("GDPR", "N.Y. Gen. Bus. Law", "12 CFR"): each such
 * word must appear in the instrument's source, citation path, heading or jurisdiction names
 * (abbreviations match by prefix), so "UK GDPR Article 33" never returns the EU's Article 33.
 * When several instruments qualify, the one whose own citation the words spell out wins
 * ("GDPR Article 33" over "UK GDPR Article 33"); otherwise validation_failed lists them.
 * Throws validation_failed (naming `field`, where the caller took the citation from) when the
 * text cites no provision or is ambiguous, not_found when no readable instrument has it.
 */
export function findProvision(db: Database, orgId: string, jurisdictions: readonly string[], citation: string, field = "citation"): Provision {
  const cited = citationsInQuery(citation)[0];
  const echo = citation.trim().slice(0, CITATION_ECHO_CHARS_MAX);
  if (cited === undefined) {
    throw validationFailed(`${field}: "${echo}" cites no article or section (e.g. "GDPR Article 33", "12 CFR 1003.4", "N.Y. Gen. Bus. Law § 899-aa")`);
  }
  const baseKey = cited.keys[0]!;
  const key = cited.keys.at(-1)!;
  const byDocument = new Map<string, ChunkRow[]>();
  for (const row of passagesWithKey(db, key, scopesOfSearch(orgId, jurisdictions))) {
    const passages = byDocument.get(row.document_id);
    if (passages) passages.push(row);
    else byDocument.set(row.document_id, [row]);
  }
  const citationOf = (passages: ChunkRow[]) => `${provisionCitation(passages[0]!.citation_path, baseKey)}${key.slice(baseKey.length)}`;
  const keyWords = new Set(words(key));
  const instrumentWords = (text: string) => words(text).filter((w) => !keyWords.has(w) && !FILLER_WORDS.has(w));
  const hint = instrumentWords(citation);
  const names = jurisdictionNames(db);
  const candidates = [...byDocument.values()];
  const matching = candidates.filter((passages) => hint.every((w) => haystackOf(passages[0]!, names).some((h) => sameWord(w, h))));
  if (matching.length === 0) {
    const others = candidates.map(citationOf).slice(0, 5);
    const found = others.length === 0 ? "" : `; ${others.join(", ")} ${others.length === 1 ? "is" : "are"} (cite ${others.length === 1 ? "it" : "one"} as shown)`;
    throw notFound(`no provision "${echo}" in the jurisdictions enabled for this organisation${found}`);
  }
  // Several qualify: the one whose citation has no word the request left out.
  const spelled = matching.filter((passages) => instrumentWords(citationOf(passages)).every((w) => hint.some((h) => sameWord(h, w))));
  const chosen = matching.length === 1 ? matching[0]! : spelled.length === 1 ? spelled[0]! : undefined;
  if (chosen === undefined) {
    const choices = matching.map(citationOf).slice(0, 5).join("; ");
    throw validationFailed(`${field}: "${echo}" names a provision of more than one instrument (${choices}); name the instrument as shown`);
  }
  const passages = chosen.slice(0, PROVISION_PASSAGES_MAX);
  const first = passages[0]!;
  return {
    citation: citationOf(passages),
    source: first.source,
    heading: first.heading,
    jurisdictionSlugs: JSON.parse(first.jurisdiction_slugs) as string[],
    passages: passages.map((row) => ({
      content: row.content,
      source: row.source,
      citationPath: row.citation_path,
      jurisdictionSlugs: JSON.parse(row.jurisdiction_slugs) as string[],
      ...(row.title !== "" ? { title: row.title } : {}),
    })),
  };
}

function haystackOf(row: ChunkRow, names: ReadonlyMap<string, string>): string[] {
  const slugs = JSON.parse(row.jurisdiction_slugs) as string[];
  return words([row.source, row.citation_path, row.heading, ...slugs, ...slugs.map((s) => names.get(s) ?? "")].join(" "));
}

/** Equal, or one an abbreviation of the other ("gen" of "general"; a cited word of 1–2 letters only as the shorter). */
function sameWord(cited: string, indexed: string): boolean {
  return cited === indexed || indexed.startsWith(cited) || (indexed.length >= 3 && cited.startsWith(indexed));
}

function passagesWithKey(db: Database, key: string, scopes: readonly string[]): ChunkRow[] {
  return db
    .query<ChunkRow, (string | number)[]>(
      `SELECT c.* FROM search_citation_keys k JOIN search_chunks c ON c.id = k.chunk_id
       WHERE k.citation_key = ?
         AND EXISTS (SELECT 1 FROM search_chunk_scopes s WHERE s.chunk_id = c.id AND +s.scope IN (${scopes.map(() => "?").join(", ")}))
       ORDER BY c.document_id, c.position LIMIT ?`,
    )
    .all(key, ...scopes, CANDIDATE_ROWS_MAX);
}

/**
 * The provisions of one jurisdiction that `orgId` may read (the shared corpus's and its own
 * documents' tagged with it), in document order, at most PROVISION_INDEX_MAX.
 */
export function provisionIndex(db: Database, orgId: string, slug: string): { provisions: ProvisionIndexEntry[]; truncated: boolean } {
  const rows = db
    .query<{ key: string; passages: number; source: string; citationPath: string; heading: string }, [string, string, number]>(
      `WITH visible AS (SELECT DISTINCT chunk_id FROM search_chunk_scopes WHERE scope IN (?, ?)),
       base AS (
         -- A passage's shortest key is its provision's ("article 33" of "article 33(1)"); SQLite
         -- takes the bare column from the row holding the minimum.
         SELECT k.chunk_id AS chunkId, k.citation_key AS key, min(length(k.citation_key)) AS keyLength
         FROM search_citation_keys k JOIN visible v ON v.chunk_id = k.chunk_id GROUP BY k.chunk_id),
       grouped AS (
         SELECT c.document_id AS documentId, b.key AS key, min(c.position) AS firstPosition, count(*) AS passages
         FROM base b JOIN search_chunks c ON c.id = b.chunkId GROUP BY c.document_id, b.key)
       SELECT g.key AS key, g.passages AS passages, f.source AS source, f.citation_path AS citationPath, f.heading AS heading
       FROM grouped g JOIN search_chunks f ON f.document_id = g.documentId AND f.position = g.firstPosition
       ORDER BY g.documentId, g.firstPosition LIMIT ?`,
    )
    .all(slug, orgScope(orgId, slug), PROVISION_INDEX_MAX + 1);
  return {
    provisions: rows.slice(0, PROVISION_INDEX_MAX).map((r) => ({
      citation: provisionCitation(r.citationPath, r.key),
      heading: r.heading,
      source: r.source,
      passages: r.passages,
    })),
    truncated: rows.length > PROVISION_INDEX_MAX,
  };
}
