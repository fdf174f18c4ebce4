/**
 * Turns a free-text question into an FTS5 MATCH expression: an OR of its content words
 * (BM25 then rewards passages that contain more and rarer ones). Identifiers with an
 * internal separator ("899-aa", "1798.82", "§ 1003.4") become quoted phrases, which the
 * FTS tokenizer splits exactly as it split the indexed text, so they match adjacently.
 */

/** Words that carry no topic in a question about law; dropping them sharpens OR-BM25. */
export const STOPWORDS = new Set(
  (
    "a an and are as at be been being but by can could did do does doing for from had has have how i if in into is it its " +
    "may me must my no not of on or our shall should so such than that the their them then there these they this those to " +
    "under up us was we were what when where which while who whom why will with would you your about any each other " +
    "within without does do also only own same some very just over after before between both more most"
  ).split(" "),
);

/** Terms kept from one query: bounds the OR expression whatever the caller sends. */
const QUERY_TERMS_MAX = 32;
const TOKEN = /[\p{L}\p{N}]+(?:[.:/'’-][\p{L}\p{N}]+)*/gu;

export function queryTerms(query: string): string[] {
  const terms: string[] = [];
  const seen = new Set<string>();
  for (const m of query.normalize("NFKC").toLowerCase().matchAll(TOKEN)) {
    let term = m[0].replace(/['’]s$/, "");
    if (/['’]/.test(term)) term = term.replace(/['’]/g, "");
    if (STOPWORDS.has(term) || seen.has(term)) continue;
    // Single letters and bare one-digit numbers match nearly everything.
    if (term.length < 2) continue;
    seen.add(term);
    terms.push(term);
    if (terms.length >= QUERY_TERMS_MAX) break;
  }
  return terms;
}

/** Adjacent content-word pairs of the query ("data breach", "supervisory authority"). */
export function queryBigrams(query: string): string[] {
  const tokens = [...query.normalize("NFKC").toLowerCase().matchAll(TOKEN)].map((m) => m[0].replace(/['’]s$/, ""));
  const pairs = new Set<string>();
  for (let i = 0; i + 1 < tokens.length; i++) {
    const [a, b] = [tokens[i]!, tokens[i + 1]!];
    if (STOPWORDS.has(a) || STOPWORDS.has(b) || a.length < 2 || b.length < 2) continue;
    pairs.add(`${a} ${b}`);
  }
  return [...pairs].slice(0, QUERY_TERMS_MAX);
}

/**
 * FTS5 MATCH expression, or undefined when the query has no searchable term. Terms are
 * OR-ed; adjacent content-word pairs are added as phrases, so a passage that has "data
 * breach" as a phrase outranks one that merely has both words somewhere.
 *
 * Terms in a large share of passages (`isCommon`) barely change the ranking but make FTS5
 * score most of the index; they are left out, with phrases made only of them. When every
 * term is common ("definition of personal data breach" over a large corpus) a passage must
 * contain them all instead: an OR of them would score nearly every passage.
 */
export function ftsMatchExpression(query: string, isCommon: (term: string) => boolean = () => false): string | undefined {
  const all = queryTerms(query);
  if (all.length === 0) return undefined;
  const rare = all.filter((t) => !isCommon(t));
  if (rare.length === 0) return all.map(quote).join(" AND ");
  const pairs = queryBigrams(query).filter((p) => !p.split(" ").every(isCommon));
  return [...rare, ...pairs].map(quote).join(" OR ");
}

/**
 * The phrases (their texts, in order) ftsMatchExpression requires all of when every term is
 * common, or undefined when it builds an OR.
 */
export function commonTermsConjunction(query: string, isCommon: (term: string) => boolean): string[] | undefined {
  const all = queryTerms(query);
  return all.length > 0 && all.every(isCommon) ? all.map(phraseText) : undefined;
}

/** Every term is quoted: FTS5 then treats it as a phrase of its tokens and never as syntax. */
function quote(term: string): string {
  return `"${phraseText(term)}"`;
}

function phraseText(term: string): string {
  return term.replace(/['"’]/g, " ");
}
