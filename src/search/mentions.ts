/**
 * Jurisdictions a query names ("What does New York require…", "GDPR fines"). A named
 * jurisdiction is a strong hint: the search adds candidates from its partitions and
 * ranks its passages higher, without excluding the others.
 */

/** Extra names for the sample corpus's non-state jurisdictions; states are found by name. */
const ALIASES: Record<string, string[]> = {
  eu: ["GDPR", "General Data Protection Regulation", "European Union", "EU"],
  us: ["HMDA", "Regulation C", "Reg C", "Home Mortgage Disclosure", "CFR"],
  "us-dc": ["D.C.", "DC"],
  "us-vi": ["Virgin Islands", "USVI"],
};

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Slugs among `candidates` whose name or alias appears in the query as whole words.
 * Longer names win, so "West Virginia" is not also read as "Virginia".
 */
export function mentionedJurisdictions(query: string, names: ReadonlyMap<string, string>, candidates: readonly string[]): string[] {
  const terms: { slug: string; term: string }[] = [];
  for (const slug of candidates) {
    const name = names.get(slug);
    if (name !== undefined && name.length >= 4) terms.push({ slug, term: name.replace(/\s*\(.*\)$/, "") });
    for (const alias of ALIASES[slug] ?? []) terms.push({ slug, term: alias });
  }
  terms.sort((a, b) => b.term.length - a.term.length);
  let rest = query;
  const found = new Set<string>();
  for (const { slug, term } of terms) {
    // Short all-caps aliases ("EU", "DC") must match case; names match in any case.
    const caseSensitive = term.length <= 4 && term === term.toUpperCase();
    const pattern = new RegExp(`(?<![\\p{L}\\p{N}])${escape(term)}(?![\\p{L}\\p{N}])`, caseSensitive ? "gu" : "giu");
    if (pattern.test(rest)) {
      found.add(slug);
      rest = rest.replace(pattern, " ");
    }
  }
  return [...found];
}
