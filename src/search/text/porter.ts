/**
 * The Porter stemmer as SQLite's FTS5 `porter` tokenizer applies it, so a word stemmed here
 * is the term FTS5 stored: the ranker reads term statistics from the FTS index
 * (fts5vocab) by these stems. test/search/porter.test.ts checks it against FTS5 itself over
 * the sample corpus's vocabulary.
 */

/** FTS5 leaves tokens shorter than 3 or longer than 64 bytes unstemmed. */
const STEM_CHARS_MIN = 3;
const STEM_CHARS_MAX = 64;

function isConsonant(w: string, i: number): boolean {
  const c = w[i]!;
  if (c === "a" || c === "e" || c === "i" || c === "o" || c === "u") return false;
  if (c === "y") return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** m: the number of vowel-consonant sequences in w[0..end). */
function measure(w: string, end: number): number {
  let m = 0;
  let i = 0;
  while (i < end && isConsonant(w, i)) i++;
  while (i < end) {
    while (i < end && !isConsonant(w, i)) i++;
    if (i >= end) break;
    m++;
    while (i < end && isConsonant(w, i)) i++;
  }
  return m;
}

function hasVowel(w: string, end: number): boolean {
  for (let i = 0; i < end; i++) if (!isConsonant(w, i)) return true;
  return false;
}

function doubleConsonant(w: string, end: number): boolean {
  return end >= 2 && w[end - 1] === w[end - 2] && isConsonant(w, end - 1);
}

/** *o: stem ends consonant-vowel-consonant, the last not w, x or y. */
function cvc(w: string, end: number): boolean {
  if (end < 3 || !isConsonant(w, end - 1) || isConsonant(w, end - 2) || !isConsonant(w, end - 3)) return false;
  const last = w[end - 1]!;
  return last !== "w" && last !== "x" && last !== "y";
}

type Rule = readonly [suffix: string, replacement: string];

/** Replaces the first matching suffix whose stem satisfies `condition`; true when a suffix matched. */
function replaceSuffix(w: { s: string }, rules: readonly Rule[], condition: (stem: string, end: number) => boolean): boolean {
  for (const [suffix, replacement] of rules) {
    if (!w.s.endsWith(suffix)) continue;
    const end = w.s.length - suffix.length;
    if (condition(w.s, end)) w.s = w.s.slice(0, end) + replacement;
    return true;
  }
  return false;
}

const STEP2: readonly Rule[] = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"], ["bli", "ble"],
  ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"], ["ization", "ize"], ["ation", "ate"],
  ["ator", "ate"], ["alism", "al"], ["iveness", "ive"], ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"],
  ["iviti", "ive"], ["biliti", "ble"], ["logi", "log"],
];
const STEP3: readonly Rule[] = [
  ["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""], ["ness", ""],
];
const STEP4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
];

export function porterStem(word: string): string {
  if (word.length < STEM_CHARS_MIN || word.length > STEM_CHARS_MAX) return word;
  const w = { s: word };
  // Step 1a
  if (w.s.endsWith("sses")) w.s = w.s.slice(0, -2);
  else if (w.s.endsWith("ies")) w.s = w.s.slice(0, -2);
  else if (!w.s.endsWith("ss") && w.s.endsWith("s")) w.s = w.s.slice(0, -1);
  // Step 1b
  let extra = false;
  if (w.s.endsWith("eed")) {
    if (measure(w.s, w.s.length - 3) > 0) w.s = w.s.slice(0, -1);
  } else if (w.s.endsWith("ed") && hasVowel(w.s, w.s.length - 2)) {
    w.s = w.s.slice(0, -2);
    extra = true;
  } else if (w.s.endsWith("ing") && hasVowel(w.s, w.s.length - 3)) {
    w.s = w.s.slice(0, -3);
    extra = true;
  }
  if (extra) {
    if (w.s.endsWith("at") || w.s.endsWith("bl") || w.s.endsWith("iz")) w.s += "e";
    else if (doubleConsonant(w.s, w.s.length) && !/[lsz]$/.test(w.s)) w.s = w.s.slice(0, -1);
    else if (measure(w.s, w.s.length) === 1 && cvc(w.s, w.s.length)) w.s += "e";
  }
  // Step 1c
  if (w.s.endsWith("y") && hasVowel(w.s, w.s.length - 1)) w.s = `${w.s.slice(0, -1)}i`;
  // Steps 2 and 3
  replaceSuffix(w, STEP2, (s, end) => measure(s, end) > 0);
  replaceSuffix(w, STEP3, (s, end) => measure(s, end) > 0);
  // Step 4
  for (const suffix of STEP4) {
    if (!w.s.endsWith(suffix)) continue;
    const end = w.s.length - suffix.length;
    const ok = measure(w.s, end) > 1 && (suffix !== "ion" || (end > 0 && (w.s[end - 1] === "s" || w.s[end - 1] === "t")));
    if (ok) w.s = w.s.slice(0, end);
    break;
  }
  // Step 5a
  if (w.s.endsWith("e")) {
    const end = w.s.length - 1;
    const m = measure(w.s, end);
    if (m > 1 || (m === 1 && !cvc(w.s, end))) w.s = w.s.slice(0, end);
  }
  // Step 5b
  if (measure(w.s, w.s.length) > 1 && doubleConsonant(w.s, w.s.length) && w.s.endsWith("l")) w.s = w.s.slice(0, -1);
  return w.s;
}
