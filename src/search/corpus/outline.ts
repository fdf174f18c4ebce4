/**
 * Point markers at the start of statute lines — "(a)", "(1)", "(iv)", "(A)", "1.", "a." —
 * and grouping of lines under the outermost level. Roman numerals and letters collide
 * ("(i)" is the ninth letter or roman one), so a collision counts as a letter only when
 * it follows its alphabetical predecessor.
 */
import { wordCount, type StructureBlock, type StructureLine } from "./structure";

type MarkerStyle = "paren" | "dot";
type MarkerKind = "lower" | "upper" | "number" | "roman" | "ROMAN";

interface Marker {
  raw: string;
  /** Label without the trailing dot: "(a)", "1". */
  label: string;
  style: MarkerStyle;
  token: string;
}

const MARKER_AT_START = /^\s*(?:\((\d{1,3}[a-z]?|[a-z]{1,5}|[A-Z]{1,5})\)|(\d{1,3}|[a-z]|[A-Z]|[IVX]{1,5})\.(?=\s))/;
const ROMAN_LOWER = /^(?=[ivxl])m*(c[md]|d?c{0,3})(x[cl]|l?x{0,3})(i[xv]|v?i{0,3})$/;
const ROMAN_UPPER = /^(?=[IVXL])M*(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$/;

export function markerAtStart(text: string): Marker | undefined {
  const m = MARKER_AT_START.exec(text);
  if (m === null) return undefined;
  if (m[1] !== undefined) return { raw: m[0].trim(), label: `(${m[1]})`, style: "paren", token: m[1] };
  return { raw: m[0].trim(), label: m[2]!, style: "dot", token: m[2]! };
}

function kindsOf(token: string): MarkerKind[] {
  if (/^\d/.test(token)) return ["number"];
  const kinds: MarkerKind[] = [];
  if (/^[a-z]$/.test(token) || /^([a-z])\1+$/.test(token)) kinds.push("lower");
  if (/^[A-Z]$/.test(token) || /^([A-Z])\1+$/.test(token)) kinds.push("upper");
  if (ROMAN_LOWER.test(token)) kinds.push("roman");
  if (ROMAN_UPPER.test(token)) kinds.push("ROMAN");
  return kinds;
}

function letterOrdinal(token: string): number {
  // "aa" follows "z" in statutes that run past the alphabet.
  return (token.length - 1) * 26 + (token.toLowerCase().charCodeAt(0) - 96);
}

interface Level {
  style: MarkerStyle;
  kind: MarkerKind;
}

function levelOf(marker: Marker): Level | undefined {
  const kinds = kindsOf(marker.token);
  if (kinds.length === 0) return undefined;
  // A first marker "(i)" or "I." opens a roman level; any other letter opens a letter level.
  const kind = kinds.includes("roman") && marker.token === "i" ? "roman" : kinds.includes("ROMAN") && marker.token === "I" ? "ROMAN" : kinds[0]!;
  return { style: marker.style, kind };
}

/** Whether `marker` continues `level` after the sibling `previous`. */
function continues(level: Level, marker: Marker, previous: Marker | undefined): boolean {
  if (marker.style !== level.style) return false;
  const kinds = kindsOf(marker.token);
  if (!kinds.includes(level.kind)) return false;
  if ((level.kind === "lower" || level.kind === "upper") && (kinds.includes("roman") || kinds.includes("ROMAN"))) {
    return previous !== undefined && letterOrdinal(marker.token) === letterOrdinal(previous.token) + 1;
  }
  return true;
}

export interface OutlineItem {
  /** Marker label of the outermost level, e.g. "(a)" or "1"; undefined for the lead-in text. */
  label: string | undefined;
  lines: string[];
}

/** Groups lines under the outermost marker level; text before the first marker is the lead-in. */
export function splitOutline(lines: string[]): OutlineItem[] {
  const items: OutlineItem[] = [];
  let level: Level | undefined;
  let previous: Marker | undefined;
  for (const line of lines) {
    const marker = markerAtStart(line);
    if (marker !== undefined && level === undefined) level = levelOf(marker);
    if (marker !== undefined && level !== undefined && continues(level, marker, previous)) {
      items.push({ label: marker.label, lines: [line] });
      previous = marker;
      continue;
    }
    const current = items[items.length - 1];
    if (current === undefined) items.push({ label: undefined, lines: [line] });
    else current.lines.push(line);
  }
  return items;
}

/** Lines of one item, with the markers of its next level kept for citing windows. */
export function markedLines(lines: string[]): StructureLine[] {
  const [first, ...rest] = lines;
  if (first === undefined) return [];
  const children = splitOutline(rest);
  return [
    { text: first },
    ...children.flatMap((child) => child.lines.map((text, i): StructureLine => (i === 0 && child.label !== undefined ? { marker: child.label, text } : { text }))),
  ];
}

/** A lead-in this short ("Notice may be given by:") belongs with the points it introduces. */
const LEAD_IN_WORDS_MAX = 60;

/**
 * Blocks of one section: one per outermost subdivision, cited `root > label`. A short
 * lead-in joins the first subdivision so it is never a passage on its own.
 */
export function outlineBlocks(root: string, heading: string, lines: string[], title?: StructureBlock["title"]): StructureBlock[] {
  const items = splitOutline(lines);
  const [first, second] = items;
  if (first !== undefined && first.label === undefined && second !== undefined && wordCount(first.lines.join(" ")) <= LEAD_IN_WORDS_MAX) {
    items.splice(0, 2, { label: second.label, lines: [...first.lines, ...second.lines] });
  }
  return items.map((item) => ({
    path: item.label === undefined ? [root] : [root, item.label.replace(/\.$/, "")],
    heading,
    title,
    lines: markedLines(item.lines),
  }));
}
