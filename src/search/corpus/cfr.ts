/**
 * 12 CFR Part 1003 (Regulation C) from the GPO plain-text rendering: sections
 * "§ 1003.4" + title line + paragraphs "(a) Heading. …" (cited `12 CFR 1003.4 > (a)`),
 * Appendices A and B (cited `12 CFR Part 1003, App. A > I.A`), and the staff commentary in
 * Supplement I (cited `12 CFR Part 1003, Supp. I > 1003.4 > 4(a)(7)`).
 */
import { markedLines, outlineBlocks } from "./outline";
import { normaliseSpaces, type StructureBlock, type StructureLine } from "./structure";

export const CFR_SOURCE = "12 CFR Part 1003 — Home Mortgage Disclosure (Regulation C)";
const PART = "12 CFR Part 1003";

const APPENDIX_START = /^Pt\. 1003, (App\. [AB]|Supp\. I)$/;
const SECTION_START = /^§ (1003\.\d+)$/;

export function parseCfrText(text: string): StructureBlock[] {
  // Indentation is kept: in § 1003.2 a deeper-indented line starts a defined term.
  const lines = normaliseSpaces(text).split(/\r?\n/).filter((l) => l.trim() !== "");
  const blocks: StructureBlock[] = [];
  let i = lines.findIndex((l) => SECTION_START.test(l.trim()));
  if (i < 0) throw new Error("CFR: no § 1003.x section found");
  while (i < lines.length) {
    const section = SECTION_START.exec(lines[i]!.trim());
    const appendix = APPENDIX_START.exec(lines[i]!.trim());
    let end = i + 1;
    while (end < lines.length && !SECTION_START.test(lines[end]!.trim()) && !APPENDIX_START.test(lines[end]!.trim())) end++;
    const raw = lines.slice(i + 1, end);
    const body = raw.map((l) => l.trim());
    if (section) blocks.push(...(isDefinitions(body) ? definitionBlocks(section[1]!, raw) : sectionBlocks(section[1]!, body)));
    else if (appendix) blocks.push(...(appendix[1] === "Supp. I" ? commentaryBlocks(body) : appendixBlocks(appendix[1]!, body)));
    i = end;
  }
  return blocks;
}

function sectionBlocks(number: string, body: string[]): StructureBlock[] {
  const [title = "", ...rest] = body;
  const heading = `§ ${number} ${title.replace(/\.$/, "")} (Regulation C)`;
  const root = `12 CFR ${number}`;
  return outlineBlocks(root, heading, rest, { segment: 0, text: title.replace(/\.$/, "") });
}

const indentOf = (line: string) => line.length - line.trimStart().length;

function isDefinitions(body: string[]): boolean {
  return body[1] === "In this part:";
}

/** § 1003.2: each defined term (a deeper-indented line) is its own block, cited by the term. */
function definitionBlocks(number: string, raw: string[]): StructureBlock[] {
  const [titleLine = "", , ...rest] = raw;
  const heading = `§ ${number} ${titleLine.trim().replace(/\.$/, "")} (Regulation C)`;
  const root = `12 CFR ${number}`;
  const baseIndent = Math.min(...rest.map(indentOf));
  const groups: string[][] = [];
  for (const line of rest) {
    if (indentOf(line) > baseIndent || groups.length === 0) groups.push([]);
    groups[groups.length - 1]!.push(line.trim());
  }
  return groups.map((lines) => {
    const term = /^(.{1,80}?)(?:—| means| includes| has the)/.exec(lines[0]!)?.[1] ?? lines[0]!.slice(0, 40);
    return { path: [root, term.trim()], heading, title: { segment: 0, text: titleLine.trim().replace(/\.$/, "") }, lines: markedLines(lines), definition: true };
  });
}

/** Appendix headings: roman parts ("I. Instructions…") and lettered groups ("A. Application…"). */
function appendixBlocks(name: string, body: string[]): StructureBlock[] {
  const [title = "", ...rest] = body;
  const root = `${PART}, ${name}`;
  const blocks: StructureBlock[] = [];
  let part = "";
  let partTitle = "";
  let group = "";
  let groupTitle = "";
  let lines: StructureLine[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    const label = [part, group].filter((s) => s !== "").join(".");
    // The most specific named level carries the title: "A. Application or Loan Information".
    const named = (groupTitle || partTitle).replace(/^[A-Z]+\. /, "");
    blocks.push({
      path: label === "" ? [root] : [root, label],
      heading: [title, partTitle, groupTitle].filter((s) => s !== "").join(" — "),
      title: label === "" ? { segment: 0, text: title } : { segment: 1, text: named },
      lines,
    });
    lines = [];
  };
  for (const line of rest) {
    const roman = /^([IVX]+)\. (.+)$/.exec(line);
    const letter = /^([A-Z])\. (.{1,80})$/.exec(line);
    if (roman && roman[2]!.split(" ").length <= 12) {
      flush();
      part = roman[1]!;
      partTitle = line;
      group = "";
      groupTitle = "";
    } else if (letter && part !== "" && !/[.;:]$/.test(letter[2]!) && letter[2]!.split(" ").length <= 8) {
      flush();
      group = letter[1]!;
      groupTitle = line;
    } else {
      const numbered = /^(\d{1,2})\. /.exec(line);
      lines.push(numbered ? { marker: numbered[1]!, text: line } : { text: line });
    }
  }
  flush();
  return blocks;
}

/** Supplement I: "Section 1003.2—Definitions", then comment groups "4(a)(7) …" or defined terms. */
function commentaryBlocks(body: string[]): StructureBlock[] {
  const root = `${PART}, Supp. I`;
  const blocks: StructureBlock[] = [];
  let section = "Introduction";
  let sectionTitle = "Staff Commentary — Introduction";
  let topic: string | undefined;
  let lines: StructureLine[] = [];
  const flush = () => {
    if (lines.length === 0) return;
    blocks.push({
      path: topic === undefined ? [root, section] : [root, section, topic],
      heading: `Official Staff Commentary — ${sectionTitle}${topic ? ` — ${topic}` : ""}`,
      title: { segment: 1, text: sectionTitle.replace(/^§ \S+ /, "") },
      lines,
    });
    lines = [];
  };
  for (const line of body.slice(1)) {
    const sectionHeading = /^Section (1003\.\d+)(?:\([a-z]\))?—(.+)$/.exec(line);
    const paragraphHeading = /^Paragraph (\d+\([a-z]\)(?:\(\w+\))*)\.$/.exec(line);
    const commentGroup = /^(\d+\([a-z]\)(?:\(\d+\))*(?:\([ivx]+\))?)\s+(.*)$/.exec(line);
    const definedTerm = /^([A-Z][A-Za-z -]{2,60})\.$/.exec(line);
    if (sectionHeading) {
      flush();
      section = sectionHeading[1]!;
      sectionTitle = `§ ${sectionHeading[1]} ${sectionHeading[2]}`;
      topic = undefined;
    } else if (paragraphHeading) {
      flush();
      topic = paragraphHeading[1]!;
    } else if (commentGroup && commentGroup[2]!.split(" ").length <= 12) {
      flush();
      topic = `${commentGroup[1]}${commentGroup[2] ? ` ${commentGroup[2].replace(/\.$/, "")}` : ""}`;
    } else if (definedTerm && definedTerm[1]!.split(" ").length <= 6) {
      flush();
      topic = definedTerm[1]!;
    } else {
      const numbered = /^(\d{1,2})\. /.exec(line);
      lines.push(numbered ? { marker: numbered[1]!, text: line } : { text: line });
    }
  }
  flush();
  return blocks;
}
