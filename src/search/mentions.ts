/**
 * Jurisdictions a query names: "What does New York require…", "Ohioans", "under Oregon
 * law", "a Georgia resident", "our TX customers", "in Europe", "GDPR fines". A named
 * jurisdiction is a strong hint: the search adds candidates from its partitions and the
 * ranker weighs its passages up, without excluding the others. Only jurisdictions the
 * search may read are ever considered, so a name never widens a filter.
 */

/** Extra names for the sample corpus's jurisdictions, beyond their own names. */
const ALIASES: Record<string, string[]> = {
  eu: ["GDPR", "General Data Protection Regulation", "European Union", "Europe", "European", "Europeans", "EU", "E.U."],
  us: ["HMDA", "Regulation C", "Reg C", "Home Mortgage Disclosure", "CFR", "CFPB"],
  "us-dc": ["D.C.", "DC", "Washington D.C.", "Washington, D.C."],
  "us-vi": ["Virgin Islands", "USVI"],
  "us-gu": ["Guamanian", "Guamanians"],
  "us-in": ["Hoosier", "Hoosiers"],
  "us-ma": ["Bay Stater", "Bay Staters"],
  "us-ca": ["Calif."],
  "us-ny": ["N.Y."],
  "us-nj": ["N.J."],
};

/** Residents' names ("Ohioan", plural with s), by slug. */
const DEMONYMS: Record<string, string[]> = {
  "us-ak": ["Alaskan"], "us-az": ["Arizonan"], "us-ar": ["Arkansan"], "us-ca": ["Californian"], "us-co": ["Coloradan"],
  "us-ct": ["Connecticuter", "Nutmegger"], "us-de": ["Delawarean"], "us-fl": ["Floridian"], "us-ga": ["Georgian"], "us-hi": ["Hawaii resident"],
  "us-id": ["Idahoan"], "us-il": ["Illinoisan"], "us-ia": ["Iowan"], "us-ks": ["Kansan"], "us-ky": ["Kentuckian"],
  "us-la": ["Louisianan", "Louisianian"], "us-me": ["Mainer"], "us-md": ["Marylander"], "us-mi": ["Michigander", "Michiganian"],
  "us-mn": ["Minnesotan"], "us-ms": ["Mississippian"], "us-mo": ["Missourian"], "us-mt": ["Montanan"], "us-ne": ["Nebraskan"],
  "us-nv": ["Nevadan"], "us-nh": ["New Hampshirite"], "us-nj": ["New Jerseyan", "New Jerseyite"], "us-ny": ["New Yorker"],
  "us-nc": ["North Carolinian"], "us-nd": ["North Dakotan"], "us-oh": ["Ohioan"], "us-ok": ["Oklahoman"], "us-or": ["Oregonian"],
  "us-pa": ["Pennsylvanian"], "us-ri": ["Rhode Islander"], "us-sc": ["South Carolinian"], "us-tn": ["Tennessean", "Tennesseean"],
  "us-tx": ["Texan"], "us-ut": ["Utahn", "Utahan"], "us-vt": ["Vermonter"], "us-va": ["Virginian"], "us-wa": ["Washingtonian"],
  "us-wv": ["West Virginian"], "us-wi": ["Wisconsinite"], "us-wy": ["Wyomingite"], "us-vi": ["Virgin Islander"],
};

/**
 * Postal codes that are also English words ("IN", "OR", "ME", "OK", "HI"): they count only
 * beside a word that says a place is meant ("OR law", "IN-based", "customers in ME").
 */
const AMBIGUOUS_CODES = new Set(["IN", "OR", "ME", "OK", "HI", "DE", "PA", "MA", "CO", "AL", "LA", "MO", "ID", "OH", "GA", "MD", "MT", "ND", "SD", "NE", "VA", "WA", "VT", "WI", "MI", "AK", "AR", "CT", "IA", "KS", "KY", "UT", "NV", "NH", "NM", "SC", "NC", "TN", "TX", "RI", "MN", "MS", "AZ", "FL", "IL", "WV", "WY", "DC", "GU", "VI", "NJ", "NY", "CA"]);
const PLACE_CONTEXT = /^(?:[-‐]based|law|laws|statute|statutes|code|resident|residents|customers?|consumers?|clients?|users?|employees?|company|companies|business|businesses|firm|retailer|bank|lender|office|state|AG|attorney general|breach|notification|notice|rules?|requirements?)\b/i;
const PLACE_BEFORE = /\b(?:in|under|from|for|of|to|state of|our|an?|the)\s*$/i;
const WORD_CODES_NEED_CONTEXT = new Set(["IN", "OR", "ME", "OK", "HI", "DE", "PA", "MA", "CO", "AL", "LA", "MO", "ID", "OH"]);

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

interface Term {
  slug: string;
  term: string;
  /** Match case exactly (postal codes, "EU", "D.C."); longer names match in any case ("gdpr"). */
  exactCase: boolean;
  /** A postal code that is also a word: needs a place word beside it. */
  needsContext: boolean;
}

/** Every term of a set in one pattern per case rule, longest first, so "West Virginia" wins over "Virginia". */
interface CompiledTerms {
  anyCase: RegExp;
  exactCase: RegExp;
  byText: Map<string, Term>;
}

function termsFor(names: ReadonlyMap<string, string>, candidates: readonly string[]): Term[] {
  const terms: Term[] = [];
  const add = (slug: string, term: string, needsContext = false) =>
    terms.push({ slug, term, exactCase: term === term.toUpperCase() && (term.length <= 3 || /^(?:[A-Z]\.)+$/.test(term)), needsContext });
  for (const slug of candidates) {
    const name = names.get(slug)?.replace(/\s*\(.*\)$/, "").replace(/^U\.S\. /, "");
    if (name !== undefined && name.length >= 4 && slug !== "us") add(slug, name);
    for (const alias of ALIASES[slug] ?? []) add(slug, alias);
    for (const demonym of DEMONYMS[slug] ?? []) {
      add(slug, demonym);
      add(slug, `${demonym}s`);
    }
    const code = /^us-([a-z]{2})$/.exec(slug)?.[1]?.toUpperCase();
    if (code !== undefined && AMBIGUOUS_CODES.has(code)) add(slug, code, WORD_CODES_NEED_CONTEXT.has(code));
  }
  return terms;
}

function compile(terms: readonly Term[]): CompiledTerms {
  const pattern = (list: readonly Term[], flags: string) => {
    const alternatives = [...list].sort((a, b) => b.term.length - a.term.length).map((t) => escape(t.term));
    return new RegExp(`(?<![\\p{L}\\p{N}])(?:${alternatives.join("|") || "(?!)"})(?![\\p{L}\\p{N}])`, flags);
  };
  const byText = new Map<string, Term>();
  for (const t of terms) byText.set(t.exactCase ? t.term : t.term.toLowerCase(), t);
  return { anyCase: pattern(terms.filter((t) => !t.exactCase), "giu"), exactCase: pattern(terms.filter((t) => t.exactCase), "gu"), byText };
}

/** Compiled terms per set of names and candidates, so a search does not rebuild them. */
const TERM_SETS_CACHED_MAX = 64;
const termSets = new Map<string, CompiledTerms>();

function cachedTerms(names: ReadonlyMap<string, string>, candidates: readonly string[]): CompiledTerms {
  const key = candidates.map((c) => `${c}=${names.get(c) ?? ""}`).join("\n");
  let compiled = termSets.get(key);
  if (compiled === undefined) {
    compiled = compile(termsFor(names, candidates));
    if (termSets.size >= TERM_SETS_CACHED_MAX) termSets.clear();
    termSets.set(key, compiled);
  }
  return compiled;
}

/** A postal code that is also a word counts only beside a word that says a place is meant. */
function placeMeant(query: string, start: number, end: number): boolean {
  const after = query.slice(end);
  return PLACE_CONTEXT.test(after.trimStart()) || (PLACE_BEFORE.test(query.slice(0, start)) && /^(?:[-‐]|\s+[a-z]|$)/.test(after));
}

/** Slugs among `candidates` that the query names, as whole words. */
export function mentionedJurisdictions(query: string, names: ReadonlyMap<string, string>, candidates: readonly string[]): string[] {
  const compiled = cachedTerms(names, candidates);
  // A query typed in capitals says nothing by its capitals: postal codes and "EU" are then ignored.
  const shouting = query === query.toUpperCase() && /[A-Z]{5}/.test(query);
  const found = new Set<string>();
  for (const m of query.matchAll(compiled.anyCase)) found.add(compiled.byText.get(m[0].toLowerCase())!.slug);
  if (!shouting) {
    for (const m of query.matchAll(compiled.exactCase)) {
      const term = compiled.byText.get(m[0])!;
      if (!term.needsContext || placeMeant(query, m.index!, m.index! + m[0].length)) found.add(term.slug);
    }
  }
  return [...found];
}
