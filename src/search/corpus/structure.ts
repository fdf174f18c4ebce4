/**
 * Legal-structure chunking. Parsers turn an instrument into blocks (an article paragraph,
 * a statute subsection), each a list of lines that may start with a point marker such as
 * "(a)" or "1.". Blocks become passages of roughly PASSAGE_WORDS_MIN..MAX words:
 * a long block is cut at line (then sentence) boundaries into windows that overlap by a
 * few lines, short neighbouring blocks of the same parent are merged. A passage never
 * spans two parents (articles, sections), so its citation path stays exact.
 */

export interface StructureLine {
  /** Point marker the line starts with, e.g. "(a)", "(1)", "2."; absent for running text. */
  marker?: string;
  text: string;
}

export interface StructureBlock {
  /** Citation segments, outermost first: ["GDPR", "Article 33", "1"]. */
  path: string[];
  /** Title of the enclosing article/section, indexed as its own field. */
  heading: string;
  /**
   * The provision's own title ("Right to erasure ('right to be forgotten')") and the path
   * segment it names (1 for "GDPR > Article 17"), shown in the citation path after it.
   */
  title?: { segment: number; text: string };
  lines: StructureLine[];
  /**
   * One defined term: its own passage, never merged with a neighbour, however short. A
   * question about a term needs its definition whole and alone (a passage of six definitions
   * neither embeds nor cites like any one of them).
   */
  definition?: true;
}

export interface ChunkedPassage {
  /** With the provision's title: "GDPR > Article 17 (Right to erasure ('right to be forgotten')) > 3". */
  citationPath: string;
  heading: string;
  /** The provision's title; "" when it has none. */
  title: string;
  text: string;
}

export const PASSAGE_WORDS_MIN = 100;
export const PASSAGE_WORDS_MAX = 400;
/** Target size when a block is cut: leaves headroom under the maximum for the overlap. */
const WINDOW_WORDS_TARGET = 300;
/** Words repeated from the end of one window at the start of the next. */
const WINDOW_OVERLAP_WORDS = 40;

export const PATH_SEPARATOR = " > ";

/** Exotic spaces (en space, no-break space) become plain spaces; zero-width marks and BOMs go. */
export function normaliseSpaces(text: string): string {
  return text.replace(/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/g, " ").replace(/[\u200b\ufeff]/g, "");
}

export function wordCount(text: string): number {
  const trimmed = text.trim();
  return trimmed === "" ? 0 : trimmed.split(/\s+/).length;
}

interface Piece {
  parent: string[];
  title: StructureBlock["title"];
  /** Last path segment (subdivision label), or undefined when the piece is the whole parent. */
  label: string | undefined;
  heading: string;
  lines: StructureLine[];
  words: number;
  definition: boolean;
}

/** Splits an over-long line at sentence ends so no single line exceeds the window target. */
function splitLongLine(line: StructureLine): StructureLine[] {
  if (wordCount(line.text) <= WINDOW_WORDS_TARGET) return [line];
  const sentences = line.text.match(/[^.;:]+(?:[.;:]+|$)\s*/g) ?? [line.text];
  const out: StructureLine[] = [];
  let current = "";
  for (const sentence of sentences) {
    if (current !== "" && wordCount(current) + wordCount(sentence) > WINDOW_WORDS_TARGET) {
      out.push({ marker: out.length === 0 ? line.marker : undefined, text: current.trim() });
      current = "";
    }
    current += sentence;
  }
  if (current.trim() !== "") out.push({ marker: out.length === 0 ? line.marker : undefined, text: current.trim() });
  // A single sentence longer than the target: cut by words as a last resort.
  return out.flatMap((l) => {
    const words = l.text.split(/\s+/);
    if (words.length <= PASSAGE_WORDS_MAX) return [l];
    const parts: StructureLine[] = [];
    for (let i = 0; i < words.length; i += WINDOW_WORDS_TARGET) {
      parts.push({ marker: i === 0 ? l.marker : undefined, text: words.slice(i, i + WINDOW_WORDS_TARGET).join(" ") });
    }
    return parts;
  });
}

/** The marker range a window covers, e.g. "(a)–(c)", or the marker in force at its start. */
function markerLabel(lines: StructureLine[], inForce: string | undefined): string | undefined {
  const markers = lines.map((l) => l.marker).filter((m): m is string => m !== undefined);
  const first = lines[0]?.marker ?? inForce ?? markers[0];
  const last = markers[markers.length - 1];
  if (first === undefined) return undefined;
  return last === undefined || last === first ? first : `${first}–${last}`;
}

function cutBlock(block: StructureBlock): Piece[] {
  const parentPath = block.path.slice(0, -1);
  const ownLabel = block.path[block.path.length - 1];
  const lines = block.lines.flatMap(splitLongLine);
  const total = lines.reduce((n, l) => n + wordCount(l.text), 0);
  if (total <= PASSAGE_WORDS_MAX) {
    return [{ parent: parentPath, title: block.title, label: ownLabel, heading: block.heading, lines, words: total, definition: block.definition === true }];
  }
  // Too long: windows of whole lines; each window is cited as the block plus its point range.
  const pieces: Piece[] = [];
  let start = 0;
  let inForce: string | undefined;
  while (start < lines.length) {
    let end = start;
    let words = 0;
    while (end < lines.length && (end === start || words + wordCount(lines[end]!.text) <= WINDOW_WORDS_TARGET)) {
      words += wordCount(lines[end]!.text);
      end++;
    }
    const window = lines.slice(start, end);
    const range = markerLabel(window, inForce);
    const label = range === undefined ? ownLabel : ownLabel === undefined ? range : `${ownLabel}${PATH_SEPARATOR}${range}`;
    pieces.push({ parent: parentPath, title: block.title, label, heading: block.heading, lines: window, words, definition: block.definition === true });
    if (end >= lines.length) break;
    // Overlap: step back over trailing lines worth up to WINDOW_OVERLAP_WORDS.
    let back = end;
    let overlap = 0;
    while (back - 1 > start && overlap + wordCount(lines[back - 1]!.text) <= WINDOW_OVERLAP_WORDS) {
      back--;
      overlap += wordCount(lines[back]!.text);
    }
    inForce = undefined;
    for (let i = 0; i < back; i++) if (lines[i]!.marker !== undefined) inForce = lines[i]!.marker;
    start = back;
  }
  return pieces;
}

function sameParent(a: Piece, b: Piece): boolean {
  return a.parent.join(PATH_SEPARATOR) === b.parent.join(PATH_SEPARATOR) && a.heading === b.heading;
}

function mergedLabel(first: string | undefined, last: string | undefined): string | undefined {
  if (first === undefined) return last;
  if (last === undefined || last === first) return first;
  // "1" + "2 > (a)–(c)" → "1–2": a merged range cites the subdivisions, not their points.
  const head = (label: string) => label.split(PATH_SEPARATOR)[0]!;
  const firstHead = head(first).split("–")[0]!;
  const lastParts = head(last).split("–");
  const lastHead = lastParts[lastParts.length - 1]!;
  return firstHead === lastHead ? firstHead : `${firstHead}–${lastHead}`;
}

export function chunkBlocks(blocks: StructureBlock[]): ChunkedPassage[] {
  const pieces = blocks.flatMap(cutBlock).filter((p) => p.words > 0);
  const merged: Piece[] = [];
  for (const piece of pieces) {
    const previous = merged[merged.length - 1];
    if (
      previous !== undefined &&
      sameParent(previous, piece) &&
      !previous.definition &&
      !piece.definition &&
      previous.label !== undefined &&
      piece.label !== undefined &&
      (previous.words < PASSAGE_WORDS_MIN || piece.words < PASSAGE_WORDS_MIN / 2) &&
      previous.words + piece.words <= PASSAGE_WORDS_MAX
    ) {
      previous.label = mergedLabel(previous.label, piece.label);
      previous.lines = [...previous.lines, ...piece.lines];
      previous.words += piece.words;
      continue;
    }
    merged.push({ ...piece, lines: [...piece.lines] });
  }
  return merged.map((p) => ({
    // A window's label ("Article 4 > (1)–(6)") is two segments: the title follows the first.
    citationPath: titledPath([...p.parent, ...(p.label === undefined ? [] : p.label.split(PATH_SEPARATOR))], p.title),
    heading: p.heading,
    title: p.title?.text ?? "",
    text: p.lines.map((l) => l.text).join("\n"),
  }));
}

/** Path segments joined, the titled segment followed by its title in parentheses. */
export function titledPath(segments: readonly string[], title: StructureBlock["title"]): string {
  return segments
    .map((s, i) => (title !== undefined && title.text !== "" && i === title.segment ? `${s} (${title.text})` : s))
    .join(PATH_SEPARATOR);
}

/** A subdivision label in parentheses: "(a)", "(16)", "(11b)", "(iv)", "(A)", "(3m)". */
const LABEL_IN_PARENTHESES = /^\((?:\d{1,4}[a-z]{0,2}|[a-z]{1,2}|[ivxlc]{1,6}|[A-Z]{1,2}|[IVXLC]{1,6})\)$/;

/**
 * A citation path without the titles it shows: "GDPR > Article 17 (Right to erasure
 * ('right to be forgotten')) > 3" → "GDPR > Article 17 > 3". A title is a parenthesised
 * group after a space that is not a subdivision label.
 */
export function untitledPath(citationPath: string): string {
  let out = "";
  let depth = 0;
  let group = "";
  for (const ch of citationPath) {
    if (depth === 0 && ch !== "(") {
      out += ch;
      continue;
    }
    group += ch;
    if (ch === "(") depth++;
    else if (ch === ")") depth--;
    if (depth === 0) {
      if (out.endsWith(" ") && !LABEL_IN_PARENTHESES.test(group)) out = out.slice(0, -1);
      else out += group;
      group = "";
    }
  }
  return out + group;
}
