/**
 * US state data-breach statutes (plain text, one file per state or territory, sections
 * introduced by a code-specific header such as "§ 899-aa." or "NRS 603A.020"). Each
 * state's header pattern and citation form is listed here; sections become blocks per
 * outermost subdivision, cited `N.Y. Gen. Bus. Law § 899-aa > 2`.
 */
import { markerAtStart, outlineBlocks } from "./outline";
import { normaliseSpaces, type StructureBlock } from "./structure";

export interface StateStatute {
  /** File name in the source folder, without .txt. */
  file: string;
  /** USPS code, lower case: the jurisdiction slug is `us-<code>`. */
  code: string;
  name: string;
  /** Code name as cited, e.g. "N.Y. Gen. Bus. Law". */
  codeName: string;
  /** Header line: group 1 is the section number, the rest of the line is title and maybe text. */
  header: RegExp;
  /** Citation of one section; default `${codeName} § ${number}`. */
  cite?: (section: string) => string;
  /** Lines that are neither header nor text (enactment notes, chapter banners). */
  skip?: RegExp;
  /** Prefix repeated at the start of a section's first body line ("Sec. 3."). */
  bodyPrefix?: RegExp;
  /** Rewrites a line before parsing (e.g. Minnesota "Subd. 2." becomes a "2." marker). */
  rewrite?: (line: string) => string;
}

export const STATE_STATUTES: StateStatute[] = [
  { file: "alaska", code: "ak", name: "Alaska", codeName: "Alaska Stat.", header: /^Sec\. (45\.48\.\d+)\.\s*/ },
  { file: "arizona", code: "az", name: "Arizona", codeName: "Ariz. Rev. Stat.", header: /^(44-7501)\.\s*/ },
  { file: "arkansas", code: "ar", name: "Arkansas", codeName: "Ark. Code Ann.", header: /^(4-110-1\d\d)\.\s*/ },
  { file: "california", code: "ca", name: "California", codeName: "Cal. Civ. Code", header: /^(1798\.\d+)\s*$/ },
  { file: "colorado", code: "co", name: "Colorado", codeName: "Colo. Rev. Stat.", header: /^(6-1-716)\.\s*/ },
  { file: "connecticut", code: "ct", name: "Connecticut", codeName: "Conn. Gen. Stat.", header: /^Sec\. (36a-701b)\.\s*/ },
  { file: "delaware", code: "de", name: "Delaware", codeName: "Del. Code Ann. tit. 6,", header: /^§ (12B-10\d)\s*/ },
  { file: "district_of_columbia", code: "dc", name: "District of Columbia", codeName: "D.C. Code", header: /^§ (28-385\d)\.\s*/ },
  { file: "florida", code: "fl", name: "Florida", codeName: "Fla. Stat.", header: /^(501\.171)\s*/ },
  { file: "georgia", code: "ga", name: "Georgia", codeName: "Ga. Code Ann.", header: /^§ (10-1-9\d\d(?:\.\d+)?)\.\s*/ },
  { file: "guam", code: "gu", name: "Guam", codeName: "9 Guam Code Ann.", header: /^§ (48\.\d0)\.\s*/ },
  { file: "hawaii", code: "hi", name: "Hawaii", codeName: "Haw. Rev. Stat.", header: /^§(487N-\d+)\s*/ },
  { file: "idaho", code: "id", name: "Idaho", codeName: "Idaho Code", header: /^(28-51-10\d)\.\s*/ },
  { file: "illinois", code: "il", name: "Illinois", codeName: "815 ILCS 530", header: /^Sec\. (\d+)\.\s*/, cite: (n) => `815 ILCS 530/${n}` },
  {
    file: "indiana",
    code: "in",
    name: "Indiana",
    codeName: "Ind. Code",
    header: /^IC (24-4\.9-\d+-\d+(?:\.\d+)?)\s+/,
    skip: /^IC 24-4\.9-\d+ Chapter/,
    bodyPrefix: /^Sec\. \d+(?:\.\d+)?\.\s*/,
  },
  { file: "iowa", code: "ia", name: "Iowa", codeName: "Iowa Code", header: /^(715C\.\d+)\s+/ },
  { file: "kansas", code: "ks", name: "Kansas", codeName: "Kan. Stat. Ann.", header: /^(50-7a0\d)\.\s*/ },
  { file: "kentucky", code: "ky", name: "Kentucky", codeName: "Ky. Rev. Stat.", header: /^(\d{2,3}\.\d{3})\s+(?=[A-Z])/ },
  { file: "louisiana", code: "la", name: "Louisiana", codeName: "La. Rev. Stat.", header: /^§(30\d\d)\.\s*/, cite: (n) => `La. Rev. Stat. § 51:${n}` },
  { file: "maine", code: "me", name: "Maine", codeName: "Me. Rev. Stat. tit. 10,", header: /^§(13\d\d(?:-[A-Z])?)\.\s*/ },
  { file: "maryland", code: "md", name: "Maryland", codeName: "Md. Code Ann., Com. Law", header: /^§(14[–-]35\d\d)\.\s*$/ },
  {
    file: "massachusetts",
    code: "ma",
    name: "Massachusetts",
    codeName: "Mass. Gen. Laws ch. 93H,",
    header: /^Section (\d+):\s*/,
    bodyPrefix: /^Section \d+\.\s*/,
  },
  { file: "michigan", code: "mi", name: "Michigan", codeName: "Mich. Comp. Laws", header: /^(445\.\d+)\s+/, skip: /^Sec\. \d+\.$/ },
  {
    file: "minnesota",
    code: "mn",
    name: "Minnesota",
    codeName: "Minn. Stat.",
    header: /^(325E\.6\d)\s+/,
    rewrite: (line) => line.replace(/^(?:Subdivision|Subd\.) (\d+[a-z]?)\.\s*/, "$1. "),
  },
  { file: "mississippi", code: "ms", name: "Mississippi", codeName: "Miss. Code Ann.", header: /^§ (75-24-29)\.\s*/ },
  { file: "missouri", code: "mo", name: "Missouri", codeName: "Mo. Rev. Stat.", header: /^(407\.1500)\.\s*/ },
  { file: "montana", code: "mt", name: "Montana", codeName: "Mont. Code Ann.", header: /^(30-14-17\d\d)\.\s*/ },
  { file: "nebraska", code: "ne", name: "Nebraska", codeName: "Neb. Rev. Stat.", header: /^(87-80\d)\.\s*/ },
  { file: "nevada", code: "nv", name: "Nevada", codeName: "Nev. Rev. Stat.", header: /^NRS (603A\.\d+)\s+/ },
  { file: "new_hampshire", code: "nh", name: "New Hampshire", codeName: "N.H. Rev. Stat. Ann.", header: /^(359-C:\d+)\s+/ },
  {
    file: "new_jersey",
    code: "nj",
    name: "New Jersey",
    codeName: "N.J. Stat. Ann.",
    header: /^C\.(56:8-16\d)\s+/,
    bodyPrefix: /^\d{1,2}\.\s+/,
  },
  { file: "new_york", code: "ny", name: "New York", codeName: "N.Y. Gen. Bus. Law", header: /^§ (899-aa)\.\s*/ },
  { file: "north_carolina", code: "nc", name: "North Carolina", codeName: "N.C. Gen. Stat.", header: /^§ (75-6\d)\.\s*/ },
  { file: "north_dakota", code: "nd", name: "North Dakota", codeName: "N.D. Cent. Code", header: /^(51-30-0\d)\.\s*/ },
  { file: "ohio", code: "oh", name: "Ohio", codeName: "Ohio Rev. Code Ann.", header: /^(1349\.19\d?)\s+/ },
  { file: "oklahoma", code: "ok", name: "Oklahoma", codeName: "Okla. Stat. tit. 24,", header: /^§24-(16\d)\.\s*/ },
  { file: "oregon", code: "or", name: "Oregon", codeName: "Or. Rev. Stat.", header: /^(646A\.6\d\d)\s+/ },
  {
    file: "pennsylvania",
    code: "pa",
    name: "Pennsylvania",
    codeName: "73 Pa. Stat.",
    header: /^Section (\d+)\.\s*/,
    // The Breach of Personal Information Notification Act is codified at 73 P.S. § 2301 et seq.
    cite: (n) => `73 Pa. Stat. § ${2300 + Number(n)}`,
  },
  { file: "rhode_island", code: "ri", name: "Rhode Island", codeName: "R.I. Gen. Laws", header: /^§ (11-49\.3-\d+)\s+/ },
  { file: "south_carolina", code: "sc", name: "South Carolina", codeName: "S.C. Code Ann.", header: /^SECTION (39-1-90)\.\s*/ },
  { file: "tennessee", code: "tn", name: "Tennessee", codeName: "Tenn. Code Ann.", header: /^(47-18-2107)\.\s*/ },
  { file: "texas", code: "tx", name: "Texas", codeName: "Tex. Bus. & Com. Code", header: /^Sec\. (521\.\d+)\.\s*/ },
  {
    file: "utah",
    code: "ut",
    name: "Utah",
    codeName: "Utah Code Ann.",
    header: /^(13-44-\d{3})\s+/,
    skip: /^(?:Enacted by|Amended by|Renumbered and Amended by|Part \d+ )/,
  },
  { file: "vermont", code: "vt", name: "Vermont", codeName: "Vt. Stat. Ann. tit. 9,", header: /^§ (24\d\d)\.\s*/ },
  { file: "virgin_islands", code: "vi", name: "U.S. Virgin Islands", codeName: "V.I. Code Ann. tit. 14,", header: /^§ (22\d\d)\.\s*/ },
  { file: "virginia", code: "va", name: "Virginia", codeName: "Va. Code Ann.", header: /^§ (18\.2-186\.6)\.\s*/ },
  { file: "washington", code: "wa", name: "Washington", codeName: "Wash. Rev. Code", header: /^RCW (19\.255\.\d+)\s*$/ },
  { file: "west_virginia", code: "wv", name: "West Virginia", codeName: "W. Va. Code", header: /^§(46A-2A-10\d)\.\s*/ },
  { file: "wisconsin", code: "wi", name: "Wisconsin", codeName: "Wis. Stat.", header: /^(134\.98)\s+/ },
  { file: "wyoming", code: "wy", name: "Wyoming", codeName: "Wyo. Stat. Ann.", header: /^(40-12-50\d)\.\s*/ },
];

export function citeSection(state: StateStatute, section: string): string {
  return state.cite ? state.cite(section) : `${state.codeName} § ${section}`;
}

/** "Definitions. As used in…" → title "Definitions", text "As used in…". */
function splitTitle(rest: string): { title: string; text: string } {
  const trimmed = rest.replace(/^[\s.–—-]+/, "").trim();
  if (markerAtStart(trimmed) !== undefined) return { title: "", text: trimmed };
  const end = /^(.{2,250}?[.—–:])\s+[–—-]?\s*(?=["“(A-Z0-9])/.exec(trimmed);
  if (end === null) return { title: trimmed.replace(/[.\s–—-]+$/, ""), text: "" };
  return { title: end[1]!.replace(/[.:\s–—-]+$/, ""), text: trimmed.slice(end[0].length).trim() };
}

interface Section {
  number: string;
  title: string;
  lines: string[];
}

export function parseStateStatute(state: StateStatute, text: string): StructureBlock[] {
  const sections: Section[] = [];
  const lines = text
    .split(/\r?\n/)
    .map((l) => normaliseSpaces(l).trim())
    .map((l) => (state.rewrite ? state.rewrite(l) : l))
    .filter((l) => l !== "" && !(state.skip?.test(l) ?? false));
  for (const line of lines) {
    const header = state.header.exec(line);
    if (header) {
      const { title, text: inline } = splitTitle(line.slice(header[0].length));
      sections.push({ number: header[1]!.replace(/–/g, "-"), title, lines: inline ? [inline] : [] });
      continue;
    }
    const current = sections[sections.length - 1];
    // Text before the first header is a banner repeating the title: not part of any section.
    if (current === undefined) continue;
    if (current.title === "" && current.lines.length === 0 && line.split(/\s+/).length <= 15 && !/^[(\d]/.test(line)) {
      current.title = line.replace(/\.$/, "");
      continue;
    }
    if (current.lines.length === 0 && state.bodyPrefix) {
      const body = line.replace(state.bodyPrefix, "");
      if (body !== "") current.lines.push(body);
      continue;
    }
    current.lines.push(line);
  }
  if (sections.length === 0) throw new Error(`${state.file}: no section header matched`);
  return sections.flatMap((section) => {
    const citation = citeSection(state, section.number);
    const heading = `${citation}${section.title ? ` — ${section.title}` : ""}`;
    return outlineBlocks(citation, heading, section.lines, { segment: 0, text: section.title });
  });
}
