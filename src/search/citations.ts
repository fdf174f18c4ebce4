/**
 * Citation keys: a provision's identity in a normalised form that both a passage's
 * citation path and a user's query reduce to. "GDPR > Article 33 > 1–2" gives
 * "article 33", "article 33(1)", "article 33(2)"; "N.Y. Gen. Bus. Law § 899-aa > 2" gives
 * "899-aa", "899-aa(2)"; a query "Art. 33(1)" or "§ 899-aa(2)" gives the same keys, so the
 * cited passage is found by an exact lookup rather than by hoping BM25 ranks it first.
 */
import { PATH_SEPARATOR, untitledPath } from "./corpus/structure";

/** A citation path or query cannot expand into more keys than this (ranges are bounded too). */
const KEYS_MAX = 64;
const RANGE_ITEMS_MAX = 26;

function normaliseDashes(text: string): string {
  return text.replace(/[‐-―−]/g, "-");
}

/** Base key of the root segment: "article 33", or the section number after § / the last token. */
function rootKey(segment: string): string | undefined {
  const s = normaliseDashes(segment).toLowerCase();
  const article = /\barticle\s+(\d{1,3}[a-z]?)\b/.exec(s);
  if (article) return `article ${article[1]}`;
  const section = /§+\s*([0-9][\w.:/-]*)\s*$/.exec(s);
  if (section) return section[1]!.replace(/[.:-]+$/, "");
  const last = s.trim().split(/\s+/).pop() ?? "";
  return /\d/.test(last) && /^[0-9]/.test(last) ? last.replace(/[.,:-]+$/, "") : undefined;
}

/** "(a)–(c)" → ["a","b","c"]; "1–3" → ["1","2","3"]; "(16)–(22)" → 16..22; other labels as given. */
function expandLabels(segment: string): string[] {
  const parts = normaliseDashes(segment)
    .toLowerCase()
    .split(/\s*-\s*/)
    .map((p) => p.replace(/^\((.+)\)$/, "$1").replace(/\.$/, "").trim());
  const [first, last] = parts;
  if (first === undefined || first === "" || !/^[\w]{1,6}$/.test(first)) return [];
  if (last === undefined || !/^[\w]{1,6}$/.test(last)) return [first];
  if (/^\d+$/.test(first) && /^\d+$/.test(last) && Number(last) > Number(first) && Number(last) - Number(first) < RANGE_ITEMS_MAX) {
    return Array.from({ length: Number(last) - Number(first) + 1 }, (_, i) => String(Number(first) + i));
  }
  if (/^[a-z]$/.test(first) && /^[a-z]$/.test(last) && last > first) {
    return Array.from({ length: last.charCodeAt(0) - first.charCodeAt(0) + 1 }, (_, i) => String.fromCharCode(first.charCodeAt(0) + i));
  }
  return [first, last];
}

/** Keys of a passage's citation path; empty when the path names no numbered provision. */
export function citationKeysOfPath(citationPath: string): string[] {
  const [root, second, third] = untitledPath(citationPath).split(PATH_SEPARATOR).slice(0, 3);
  if (root === undefined) return [];
  // "GDPR > Article 33 > 1" has its provision in the second segment.
  let base = rootKey(root);
  let subs = [second, third];
  if (base === undefined && second !== undefined) {
    base = /^article\s/i.test(second) ? rootKey(second) : undefined;
    subs = [third];
  }
  if (base === undefined) return [];
  const keys = [base];
  const level1 = subs[0] === undefined ? [] : expandLabels(subs[0]);
  for (const a of level1) keys.push(`${base}(${a})`);
  if (level1.length === 1 && subs[1] !== undefined) {
    for (const b of expandLabels(subs[1])) keys.push(`${base}(${level1[0]})(${b})`);
  }
  return keys.slice(0, KEYS_MAX);
}

const ARTICLE_IN_QUERY = /\b(?:article|art\.?)\s*(\d{1,3})((?:\s*\(\s*\w{1,5}\s*\))*)/gi;
const SECTION_IN_QUERY = /(§+\s*)?\b(\d+[a-z]{0,2}(?:[.:/-]\w+)+|\d+[a-z]?)((?:\(\w{1,5}\))*)/gi;

function subKeys(base: string, subsText: string): string[] {
  const subs = [...subsText.matchAll(/\(\s*(\w{1,5})\s*\)/g)].map((m) => m[1]!.toLowerCase());
  const keys = [base];
  let key = base;
  for (const sub of subs.slice(0, 2)) {
    key = `${key}(${sub})`;
    keys.push(key);
  }
  return keys;
}

export interface QueryCitation {
  /** Keys from least to most specific: ["899-aa", "899-aa(2)"]. */
  keys: string[];
}

/**
 * Provisions a query cites. A bare number counts only after "§" ("§ 2435"); a number
 * with an internal separator ("899-aa", "1798.82", "1003.4") counts on its own, since
 * plain prose rarely contains one.
 */
export function citationsInQuery(query: string): QueryCitation[] {
  const text = normaliseDashes(query);
  const found: QueryCitation[] = [];
  for (const m of text.matchAll(ARTICLE_IN_QUERY)) found.push({ keys: subKeys(`article ${m[1]}`, m[2] ?? "") });
  const withoutArticles = text.replace(ARTICLE_IN_QUERY, " ");
  for (const m of withoutArticles.matchAll(SECTION_IN_QUERY)) {
    const [, sign, id, subs] = m;
    const separated = /[.:/-]/.test(id!);
    if (!separated && sign === undefined) continue;
    found.push({ keys: subKeys(id!.toLowerCase().replace(/[.:/-]+$/, ""), subs ?? "") });
  }
  return found.slice(0, KEYS_MAX);
}
