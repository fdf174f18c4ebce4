import { normaliseSpaces, type StructureBlock, type StructureLine } from "./structure";
import { childElements, collapseSpaces, findAll, firstChild, parseXml, textOf, type XmlElement } from "./xml";

export const GDPR_SOURCE = "Regulation (EU) 2016/679 (General Data Protection Regulation)";
export const GDPR_CITATION_ROOT = "GDPR";

const SKIP = new Set(["NOTE"]);

/**
 * Lines of an ALINEA/P/LIST subtree: running text, then one line per point, recursively.
 * Only the outermost points carry a marker: a sub-point's "(a)" inside point "(16)" must
 * not read as a sibling of "(16)" when a long block is cited by point range.
 */
function linesOf(element: XmlElement, nested = false): StructureLine[] {
  const lines: StructureLine[] = [];
  let running = "";
  const flush = () => {
    const text = collapseSpaces(running);
    if (text !== "") lines.push({ text });
    running = "";
  };
  const visit = (e: XmlElement) => {
    for (const child of e.children) {
      if (typeof child === "string") {
        running += child;
        continue;
      }
      if (SKIP.has(child.name)) continue;
      if (child.name === "LIST") {
        flush();
        for (const item of childElements(child, "ITEM")) lines.push(...itemLines(item, nested));
      } else if (child.name === "P" || child.name === "ALINEA") {
        flush();
        visit(child);
        flush();
      } else {
        running += ` ${textOf(child, SKIP)} `;
      }
    }
  };
  visit(element);
  flush();
  return lines;
}

function itemLines(item: XmlElement, nested: boolean): StructureLine[] {
  const np = firstChild(item, "NP");
  if (np === undefined) return linesOf(item, true);
  const marker = textOf(firstChild(np, "NO.P") ?? { name: "", attrs: {}, children: [] });
  const txt = firstChild(np, "TXT");
  const inner = childElements(np).filter((c) => c.name !== "NO.P" && c.name !== "TXT");
  const first: StructureLine = {
    marker: nested || marker === "" ? undefined : marker,
    text: collapseSpaces(`${marker} ${txt ? textOf(txt, SKIP) : ""}`),
  };
  const rest = [...inner, ...childElements(item).filter((c) => c.name !== "NP")];
  return [first, ...rest.flatMap((e) => linesOf(e, true))];
}

/** "CHAPTER IV — Controller and processor" from a DIVISION's TITLE. */
function divisionTitle(division: XmlElement): string {
  const title = firstChild(division, "TITLE");
  if (title === undefined) return "";
  const ti = firstChild(title, "TI");
  const sti = firstChild(title, "STI");
  return [ti ? textOf(ti) : "", sti ? textOf(sti) : ""].filter((s) => s !== "").join(" — ");
}

/**
 * GDPR in Formex: chapters (and sections) are DIVISIONs, articles ARTICLE, numbered
 * paragraphs PARAG, points LIST/ITEM. One block per paragraph (per article when it has no
 * numbered paragraphs), cited `GDPR > Article 33 > 1`.
 */
export function parseGdprFormex(xml: string): StructureBlock[] {
  const root = parseXml(normaliseSpaces(xml));
  const enacting = findAll(root, "ENACTING.TERMS")[0];
  if (enacting === undefined) throw new Error("GDPR: no ENACTING.TERMS element");
  const blocks: StructureBlock[] = [];
  const visit = (element: XmlElement, chapters: string[]) => {
    for (const child of childElements(element)) {
      if (child.name === "DIVISION") visit(child, [...chapters, divisionTitle(child)]);
      else if (child.name === "ARTICLE") blocks.push(...articleBlocks(child, chapters));
    }
  };
  visit(enacting, []);
  return blocks;
}

function articleBlocks(article: XmlElement, chapters: string[]): StructureBlock[] {
  const number = textOf(firstChild(article, "TI.ART")!); // "Article 33"
  const subject = textOf(firstChild(article, "STI.ART") ?? { name: "", attrs: {}, children: [] });
  const chapter = chapters[0] ?? "";
  const heading = `${number}${subject ? ` — ${subject}` : ""}${chapter ? ` (${chapter})` : ""}`;
  const title = { segment: 1, text: subject };
  const paragraphs = childElements(article, "PARAG");
  if (paragraphs.length === 0) {
    const body = childElements(article).filter((c) => c.name !== "TI.ART" && c.name !== "STI.ART");
    const lines = body.flatMap((e) => linesOf(e));
    if (subject === "Definitions") return definitionBlocks(number, heading, title, lines);
    return [{ path: [GDPR_CITATION_ROOT, number], heading, title, lines }];
  }
  return paragraphs.map((parag) => {
    const label = textOf(firstChild(parag, "NO.PARAG")!).replace(/\.$/, "");
    const body = childElements(parag).filter((c) => c.name !== "NO.PARAG");
    const lines = body.flatMap((e) => linesOf(e));
    // The paragraph number leads its first line, as in the printed text.
    if (lines[0]) lines[0] = { ...lines[0], text: `${label}. ${lines[0].text}` };
    return { path: [GDPR_CITATION_ROOT, number, label], heading, title, lines };
  });
}

/** Article 4: each numbered definition is its own block, cited `GDPR > Article 4 > (1)`; the lead-in is the title's. */
function definitionBlocks(number: string, heading: string, title: StructureBlock["title"], lines: StructureLine[]): StructureBlock[] {
  const blocks: StructureBlock[] = [];
  for (const line of lines) {
    if (line.marker !== undefined) blocks.push({ path: [GDPR_CITATION_ROOT, number, line.marker], heading, title, lines: [], definition: true });
    blocks[blocks.length - 1]?.lines.push(line);
  }
  return blocks;
}
