/**
 * What a query asks, read once per search: its own content words, their expansions from the
 * vocabulary bridge, and two intents the ranker weighs (the answer is an exception; the
 * question asks what something is).
 */
import { EXPANSION_SOURCES, type Expansion, type ExpansionSource, type Lexicon } from "../lexicon";
import { STOPWORDS } from "../query-text";
import { stemOf, wordTokens } from "../text/tokens";

export interface AnalysedQuery {
  /** The query's tokens, in order. */
  words: string[];
  /** Its content words' FTS terms, distinct, in order. */
  stems: string[];
  /** A word as written for each FTS term of the query and its expansions (FTS5 counts words, stemming them itself). */
  surfaces: Map<string, string>;
  expansions: Expansion[];
  /** The answer is likely an exception, exemption or limit ("does this apply to small firms"). */
  asksException: boolean;
  /** The question asks what something is or whether it counts ("is an IP address personal data"). */
  asksDefinition: boolean;
}

/** Query terms kept: bounds the scoring work whatever the caller sends. */
const QUERY_STEMS_MAX = 32;

const EXCEPTION_CUES =
  /\b(?:exempt\w*|exception\w*|except|unless|waiv\w+|safe harbou?r|carve[- ]out|excluded|exclusion|derogat\w+|small(?:er)? (?:firm|business|compan)\w*|(?:not|n't|never) (?:need|have|required|apply|applies|covered|count)\w*|without (?:consent|notif\w+|telling|asking)|refuse\w*|limit\w* (?:on|to)|do(?:es)?n't (?:apply|count|cover)|no longer|only if|when (?:is|are|can|do)\w* \w+ not)\b/i;
const DEFINITION_CUES = /\b(?:what (?:is|are|counts?|does|qualifies)|is (?:an?|my|the|it) \w+|are \w+ (?:considered|covered)|count(?:s|ed)? as|consider(?:ed)? (?:as |to be )?|defin\w+|mean(?:s|ing)?|qualif(?:y|ies) as|difference between|stands? for)\b/i;

export function analyseQuery(query: string, lexicon: Lexicon | undefined, sources: ReadonlySet<ExpansionSource> = new Set(EXPANSION_SOURCES)): AnalysedQuery {
  const words = wordTokens(query);
  const stems: string[] = [];
  const surfaces = new Map<string, string>();
  for (const w of words) {
    if (w.length < 2 || STOPWORDS.has(w)) continue;
    const s = stemOf(w);
    if (!stems.includes(s)) stems.push(s);
    if (!surfaces.has(s)) surfaces.set(s, w);
    if (stems.length >= QUERY_STEMS_MAX) break;
  }
  const expansions = lexicon === undefined || sources.size === 0 ? [] : lexicon.expand(words, sources);
  // An expansion's terms are its words stemmed, in order.
  for (const e of expansions) wordTokens(e.text).forEach((w, i) => surfaces.has(e.terms[i]!) || surfaces.set(e.terms[i]!, w));
  return {
    words,
    stems,
    surfaces,
    expansions,
    asksException: EXCEPTION_CUES.test(query),
    asksDefinition: DEFINITION_CUES.test(query),
  };
}
