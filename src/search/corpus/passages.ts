/**
 * The passage format shared by the shipped sample corpus (data/corpus/passages.jsonl),
 * `regkb corpus import FILE.jsonl` and the build script: one JSON object per line.
 * In a JSONL file `document` (default: the `source`) and `heading` (default: none) may be left out.
 */
export interface CorpusPassage {
  /** Stable key of the instrument the passage belongs to, e.g. "eu-gdpr", "us-ny-breach". */
  document: string;
  /** Human-readable instrument title (SearchMatch.source). */
  source: string;
  citationPath: string;
  /** Title of the enclosing article or section; indexed as its own field. */
  heading: string;
  /** The provision's own title (SearchMatch.title), when it has one; optional in imports. */
  title?: string;
  text: string;
  jurisdictions: string[];
}

export interface CorpusJurisdiction {
  slug: string;
  name: string;
  description: string;
}

/** Bounds on one imported passage: keeps a hostile JSONL line from bloating the index. */
export const PASSAGE_TEXT_CHARS_MAX = 20_000;
export const PASSAGE_FIELD_CHARS_MAX = 1_000;
export const PASSAGE_JURISDICTIONS_MAX = 64;
const SLUG = /^[a-z][a-z0-9-]{0,63}$/;
/** Left out, `document` is the `source` (one instrument per title) and `heading` is empty. */
const OPTIONAL_FIELDS = new Set(["document", "heading"]);

/** Checks one decoded JSONL value; returns a reason when it is not a valid passage. */
export function passageProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return "not an object";
  const p = value as Record<string, unknown>;
  for (const field of ["document", "source", "citationPath", "heading"] as const) {
    if (p[field] === undefined && OPTIONAL_FIELDS.has(field)) continue;
    if (typeof p[field] !== "string") return `${field} must be a string`;
    if ((p[field] as string).length > PASSAGE_FIELD_CHARS_MAX) return `${field} is longer than ${PASSAGE_FIELD_CHARS_MAX} characters`;
  }
  if (p.document === "" || (p.document === undefined && p.source === "")) return "document (or, without one, source) must not be empty";
  if (p.title !== undefined && (typeof p.title !== "string" || p.title.length > PASSAGE_FIELD_CHARS_MAX)) {
    return `title must be a string of at most ${PASSAGE_FIELD_CHARS_MAX} characters`;
  }
  if (typeof p.text !== "string" || p.text.trim() === "") return "text must be a non-empty string";
  if (p.text.length > PASSAGE_TEXT_CHARS_MAX) return `text is longer than ${PASSAGE_TEXT_CHARS_MAX} characters`;
  if (!Array.isArray(p.jurisdictions) || p.jurisdictions.length === 0 || p.jurisdictions.length > PASSAGE_JURISDICTIONS_MAX) {
    return `jurisdictions must be an array of 1 to ${PASSAGE_JURISDICTIONS_MAX} slugs`;
  }
  for (const slug of p.jurisdictions) if (typeof slug !== "string" || !SLUG.test(slug)) return `bad jurisdiction slug ${JSON.stringify(slug)}`;
  return undefined;
}

export function parsePassagesJsonl(text: string, origin: string): CorpusPassage[] {
  const passages: CorpusPassage[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    if (line.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new Error(`${origin}:${index + 1}: not valid JSON`);
    }
    const problem = passageProblem(value);
    if (problem) throw new Error(`${origin}:${index + 1}: ${problem}`);
    const p = value as Omit<CorpusPassage, "document" | "heading"> & { document?: string; heading?: string };
    passages.push({
      document: p.document ?? p.source,
      source: p.source,
      citationPath: p.citationPath,
      heading: p.heading ?? "",
      ...(p.title ? { title: p.title } : {}),
      text: p.text,
      jurisdictions: [...new Set(p.jurisdictions)],
    });
  });
  return passages;
}
