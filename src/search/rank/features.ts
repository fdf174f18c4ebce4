/**
 * Features of one candidate passage for the learned ranker (model.ts). Lexical features are
 * BM25F over the passage's three fields, computed here from its text with the index's own
 * term statistics, so the user's words and each source of expansions weigh separately.
 */
import { EXPANSION_SOURCES, type Expansion, type ExpansionSource } from "../lexicon";
import { stemOf, termsOf } from "../text/tokens";
import type { AnalysedQuery } from "./analyse";
import { definitionsIn } from "./definitions";

export const FEATURES = [
  "bm25",
  ...EXPANSION_SOURCES.map((s) => `bm25:${s}` as const),
  "coverage",
  "titleCoverage",
  "titleExpansions",
  "proximity",
  "cosine",
  "cosineGap",
  "titleCosine",
  "cosineWhenUnmatched",
  "expansionsWhenUnmatched",
  "mentionIn",
  "mentionOut",
  "definesQueryTerm",
  "definitionAsked",
  "definedShareAsked",
  "exceptionLanguage",
  "exceptionAsked",
  "logLength",
] as const;
export type Feature = (typeof FEATURES)[number];
const FEATURE_INDEX = Object.fromEntries(FEATURES.map((name, i) => [name, i])) as Record<Feature, number>;
export type FeatureVector = Float64Array;

/** A passage's fields as BM25F sees them. */
export interface CandidateText {
  /** Identifies the text: see search_chunks.content_hash. */
  contentHash: string;
  /** Where it applies, its source and citation path (with title). */
  citation: string;
  heading: string;
  title: string;
  body: string;
  jurisdictions: readonly string[];
}

export interface TermStatistics {
  passages: number;
  /** Passages holding the FTS term. */
  documentFrequency(term: string): number;
  /** Mean tokens per field over the index. */
  averageTokens: { citation: number; heading: number; body: number };
}

/** BM25F field weights (heading carries the title) and saturation. */
const FIELD_WEIGHTS = { citation: 2, heading: 3, body: 1 } as const;
const K1 = 1.2;
const B = 0.75;

/** Where each of the query's terms occurs in one field. */
interface Field {
  length: number;
  positions: Map<string, number[]>;
}

/** What a passage's text gives the features, computed once per text. */
export interface Fields {
  /** What the ids below are ids of (a cache's, as it was when these were read). */
  termIds: TermIds;
  /** The fields' FTS terms, in order, as ids. */
  citation: Int32Array;
  heading: Int32Array;
  body: Int32Array;
  title: Set<string>;
  /** Terms the passage defines (lower case), their stems, and those joined by spaces (as expansion texts are). */
  defines: { term: string; stems: string[]; phrase: string }[];
  exceptionLanguage: boolean;
}

/**
 * FTS terms as small integers, for the fields FieldCache holds: a candidate's tokens are
 * then checked against the query's terms by reading a byte, not by hashing a string (the
 * ranker reads every token of 60 candidates per search).
 */
class TermIds {
  readonly #ids = new Map<string, number>();
  readonly terms: string[] = [];

  idOf(term: string): number {
    let id = this.#ids.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.#ids.set(term, id);
      this.terms.push(term);
    }
    return id;
  }

  idsOf(terms: readonly string[]): Int32Array {
    return Int32Array.from(terms, (t) => this.idOf(t));
  }
}

/** Terms a query looks for, by id (1 where wanted); ids past its end are terms it does not name. */
interface Wanted {
  ids: Uint8Array;
  terms: readonly string[];
}

function wantedOf(termIds: TermIds, terms: ReadonlySet<string>): Wanted {
  const ids = [...terms].map((t) => termIds.idOf(t));
  const wanted = new Uint8Array(termIds.terms.length);
  for (const id of ids) wanted[id] = 1;
  return { ids: wanted, terms: termIds.terms };
}

/** Positions of the terms a query needs in one field: one pass, nothing kept for other terms. */
function fieldOf(tokens: Int32Array, needed: Wanted): Field {
  const positions = new Map<string, number[]>();
  const { ids, terms } = needed;
  for (let i = 0; i < tokens.length; i++) {
    const id = tokens[i]!;
    if (id >= ids.length || ids[id] === 0) continue;
    const t = terms[id]!;
    const list = positions.get(t);
    if (list === undefined) positions.set(t, [i]);
    else list.push(i);
  }
  return { length: tokens.length, positions };
}

/** The query's words stemmed, stopwords kept, in order: where a defined term ("restriction of processing") is looked for. */
const stemSequences = new WeakMap<AnalysedQuery, string[]>();
function stemSequence(query: AnalysedQuery): string[] {
  let seq = stemSequences.get(query);
  if (seq === undefined) {
    seq = query.words.map(stemOf);
    stemSequences.set(query, seq);
  }
  return seq;
}

/** Every FTS term a query's features look up, its own and its expansions', as ids of one FieldCache's TermIds. */
const neededTerms = new WeakMap<AnalysedQuery, { termIds: TermIds; wanted: Wanted }>();
function termsNeeded(query: AnalysedQuery, termIds: TermIds): Wanted {
  let needed = neededTerms.get(query);
  if (needed === undefined || needed.termIds !== termIds) {
    needed = { termIds, wanted: wantedOf(termIds, new Set([...query.stems, ...query.expansions.flatMap((e) => e.terms)])) };
    neededTerms.set(query, needed);
  }
  return needed.wanted;
}

/** What every candidate's features read of one query under one index state, worked out once for all of them. */
interface QueryParts {
  stats: TermStatistics;
  /** IDF by the terms' sequence (joined by spaces: a term has none). */
  idf: Map<string, number>;
  /** The query's own terms and its one-word expansions: what proximity looks for. */
  proximityStems: Set<string>;
  /** proximityStems by id, and the TermIds they are ids of. */
  proximity?: { termIds: TermIds; wanted: Wanted };
  /** Each expansion's terms, joined by spaces. */
  expansionTexts: Set<string>;
}
const queryPartsOf = new WeakMap<AnalysedQuery, QueryParts>();
function queryParts(query: AnalysedQuery, stats: TermStatistics): QueryParts {
  let parts = queryPartsOf.get(query);
  if (parts === undefined || parts.stats !== stats) {
    parts = {
      stats,
      idf: new Map(),
      proximityStems: new Set([...query.stems, ...query.expansions.filter((e) => e.terms.length === 1).map((e) => e.terms[0]!)]),
      expansionTexts: new Set(query.expansions.map((e: Expansion) => e.terms.join(" "))),
    };
    queryPartsOf.set(query, parts);
  }
  return parts;
}

/** IDF of a term sequence, computed once per query and index state. */
function idfOf(parts: QueryParts, terms: readonly string[], surfaces: ReadonlyMap<string, string>): number {
  const key = terms.join(" ");
  let weight = parts.idf.get(key);
  if (weight === undefined) {
    weight = idf(parts.stats, terms, surfaces);
    parts.idf.set(key, weight);
  }
  return weight;
}

const FIELD_CACHE_ENTRIES_MAX = 20_000;
/** Term ids held at most (queries' own terms get ids too): past it the cache starts over. */
const TERM_IDS_MAX = 1_000_000;

/**
 * Tokenised fields by the passage's content hash. One per index (SearchIndex), not per
 * process: the hash is one database's, and the citation field carries that database's
 * jurisdiction names, which the hash does not cover.
 */
export class FieldCache {
  readonly #fields = new Map<string, Fields>();
  /** The cached fields' term ids; starts over with the cache. */
  #termIds = new TermIds();

  /** Tokenises a passage's fields ahead of need (while the vector half runs elsewhere). */
  prepare(text: CandidateText): void {
    this.of(text);
  }

  of(text: CandidateText): Fields {
    let f = this.#fields.get(text.contentHash);
    if (f === undefined) {
      if (this.#fields.size >= FIELD_CACHE_ENTRIES_MAX || this.#termIds.terms.length >= TERM_IDS_MAX) {
        this.#fields.clear();
        this.#termIds = new TermIds();
      }
      const ids = this.#termIds;
      f = {
        termIds: ids,
        citation: ids.idsOf(termsOf(text.citation)),
        heading: ids.idsOf(termsOf(text.heading)),
        body: ids.idsOf(termsOf(text.body)),
        title: new Set(termsOf(text.title || text.heading)),
        defines: definitionsIn(text.body).map((d) => {
          const stems = termsOf(d.term);
          return { term: d.term, stems, phrase: stems.join(" ") };
        }),
        exceptionLanguage: EXCEPTION_LANGUAGE.test(text.body),
      };
      this.#fields.set(text.contentHash, f);
    }
    return f;
  }
}

/** Occurrences of a term sequence (one stem, or an expansion phrase) in a field. */
function occurrences(field: Field, terms: readonly string[]): number {
  const starts = field.positions.get(terms[0]!);
  if (starts === undefined) return 0;
  if (terms.length === 1) return starts.length;
  let n = 0;
  for (const start of starts) {
    if (terms.every((t, j) => j === 0 || field.positions.get(t)?.includes(start + j))) n++;
  }
  return n;
}

function idf(stats: TermStatistics, terms: readonly string[], surfaces: ReadonlyMap<string, string>): number {
  // A phrase is at most as common as its rarest word.
  const df = Math.min(...terms.map((t) => stats.documentFrequency(surfaces.get(t) ?? t)));
  return Math.log(1 + (stats.passages - df + 0.5) / (df + 0.5));
}

type IndexedFields = Record<"citation" | "heading" | "body", Field>;

function bm25f(fields: IndexedFields, terms: readonly string[], parts: QueryParts, surfaces: ReadonlyMap<string, string>): number {
  const { stats } = parts;
  let tf = 0;
  for (const field of ["citation", "heading", "body"] as const) {
    const count = occurrences(fields[field], terms);
    if (count === 0) continue;
    const norm = 1 - B + (B * fields[field].length) / Math.max(1, stats.averageTokens[field]);
    tf += (FIELD_WEIGHTS[field] * count) / norm;
  }
  return tf === 0 ? 0 : (idfOf(parts, terms, surfaces) * tf) / (K1 + tf);
}

/** Shortest token span holding two different query terms, as 1 / (1 + span); 0 if none. */
function proximity(body: Int32Array, stems: Wanted): number {
  let best = Infinity;
  let lastTerm = -1;
  let lastAt = -1;
  for (let i = 0; i < body.length; i++) {
    const t = body[i]!;
    if (t >= stems.ids.length || stems.ids[t] === 0) continue;
    if (lastTerm >= 0 && lastTerm !== t) best = Math.min(best, i - lastAt);
    lastTerm = t;
    lastAt = i;
  }
  return best === Infinity ? 0 : 1 / best;
}

function proximityWanted(parts: QueryParts, termIds: TermIds): Wanted {
  if (parts.proximity?.termIds !== termIds) parts.proximity = { termIds, wanted: wantedOf(termIds, parts.proximityStems) };
  return parts.proximity.wanted;
}

const EXCEPTION_LANGUAGE =
  /\b(?:does not apply|shall not apply|do not apply|not apply to|is exempt|are exempt|exempt(?:ed|ion)? from|exception|except(?: as| that| where| for)?|unless|shall not be required|is not required|are not required|need not|deemed (?:to be )?in compliance|does not include|shall not include|derogat\w+|safe harbou?r|not subject to)\b/i;

export interface CandidateSignals {
  /** Cosine between the query's and the passage's embeddings. */
  cosine: number;
  /** Cosine between the query's embedding and its heading's (the provision's title and place). */
  titleCosine: number;
  /** The best cosine among this query's candidates. */
  bestCosine: number;
  /** Jurisdictions the query names (among those it may read). */
  mentioned: readonly string[];
}

/** `cached`: the passage's tokenised fields (FieldCache.of). */
export function candidateFeatures(text: CandidateText, cached: Fields, query: AnalysedQuery, stats: TermStatistics, signals: CandidateSignals): FeatureVector {
  const f = new Float64Array(FEATURES.length);
  const needed = termsNeeded(query, cached.termIds);
  const fields: IndexedFields & { title: Set<string> } = {
    citation: fieldOf(cached.citation, needed),
    heading: fieldOf(cached.heading, needed),
    body: fieldOf(cached.body, needed),
    title: cached.title,
  };
  const parts = queryParts(query, stats);
  const set = (name: Feature, value: number) => {
    f[FEATURE_INDEX[name]] = value;
  };
  const own = query.stems;
  let ownScore = 0;
  let covered = 0;
  let titled = 0;
  let idfTotal = 0;
  const present = (s: string) => fields.citation.positions.has(s) || fields.heading.positions.has(s) || fields.body.positions.has(s);
  for (const s of own) {
    const w = idfOf(parts, [s], query.surfaces);
    idfTotal += w;
    ownScore += bm25f(fields, [s], parts, query.surfaces);
    if (present(s)) covered += w;
    if (fields.title.has(s)) titled += w;
  }
  set("bm25", ownScore);
  const bySource = new Map<ExpansionSource, number>();
  let titleExpansions = 0;
  for (const e of query.expansions) {
    const score = e.weight * bm25f(fields, e.terms, parts, query.surfaces);
    bySource.set(e.source, (bySource.get(e.source) ?? 0) + score);
    if (e.terms.every((t) => fields.title.has(t))) titleExpansions += e.weight;
  }
  for (const s of EXPANSION_SOURCES) set(`bm25:${s}`, bySource.get(s) ?? 0);
  set("coverage", idfTotal === 0 ? 0 : covered / idfTotal);
  set("titleCoverage", idfTotal === 0 ? 0 : titled / idfTotal);
  set("titleExpansions", Math.min(1, titleExpansions));
  set("proximity", proximity(cached.body, proximityWanted(parts, cached.termIds)));
  set("cosine", signals.cosine);
  set("cosineGap", signals.cosine - signals.bestCosine);
  set("titleCosine", signals.titleCosine);
  // Where the passage has few of the query's own words, meaning must carry the match.
  const unmatched = idfTotal === 0 ? 1 : 1 - covered / idfTotal;
  set("cosineWhenUnmatched", signals.cosine * unmatched);
  set("expansionsWhenUnmatched", (bySource.get("glossary") ?? 0) * unmatched);
  const mentioned = new Set(signals.mentioned);
  const inMentioned = text.jurisdictions.some((j) => mentioned.has(j));
  set("mentionIn", mentioned.size > 0 && inMentioned ? 1 : 0);
  set("mentionOut", mentioned.size > 0 && !inMentioned ? 1 : 0);
  const defines = definesQueryTerm(cached.defines, query, parts);
  set("definesQueryTerm", defines ? 1 : 0);
  set("definitionAsked", defines && query.asksDefinition ? 1 : 0);
  set("definedShareAsked", query.asksDefinition ? definedShare(cached.defines, query, parts, idfTotal) : 0);
  const exceptional = cached.exceptionLanguage;
  set("exceptionLanguage", exceptional ? 1 : 0);
  set("exceptionAsked", exceptional && query.asksException ? 1 : 0);
  set("logLength", Math.log(1 + fields.body.length));
  return f;
}

/** `terms` occur in `sequence`, adjacent and in order. */
function containsRun(sequence: readonly string[], terms: readonly string[]): boolean {
  if (terms.length === 0) return false;
  for (let i = 0; i + terms.length <= sequence.length; i++) {
    if (terms.every((t, j) => sequence[i + j] === t)) return true;
  }
  return false;
}

/**
 * The passage defines a term the query (or one of its expansions) names. Compared stem by
 * stem, so "home equity line of credit" finds "home-equity line of credit" and "rules" "rule".
 */
function definesQueryTerm(defines: Fields["defines"], query: AnalysedQuery, parts: QueryParts): boolean {
  if (defines.length === 0) return false;
  const sequence = stemSequence(query);
  return defines.some((d) => containsRun(sequence, d.stems) || parts.expansionTexts.has(d.phrase));
}

/**
 * How much of the query the passage's best defined term names: the idf-weighted share of
 * the query's own content words inside a defined term the query names. "personal data
 * breach" is all of "what does personal data breach mean" bar "mean"; a passage that
 * defines only "breach" or "personal data" names less of it, so the definition asked for
 * outranks the definitions of its parts.
 */
function definedShare(defines: Fields["defines"], query: AnalysedQuery, parts: QueryParts, idfTotal: number): number {
  if (defines.length === 0 || idfTotal === 0) return 0;
  const sequence = stemSequence(query);
  let best = 0;
  for (const d of defines) {
    if (!containsRun(sequence, d.stems)) continue;
    const inside = new Set(d.stems);
    let named = 0;
    for (const s of query.stems) if (inside.has(s)) named += idfOf(parts, [s], query.surfaces);
    best = Math.max(best, named / idfTotal);
  }
  return best;
}
