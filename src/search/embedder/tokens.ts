/**
 * Word splitting and a light inflectional stemmer shared by the static embedder and the
 * scripts that distil and train its table, so a word is keyed the same way at build and
 * query time.
 */

/** Longest word kept: longer runs are hashes, ids or garbage and carry no meaning. */
export const WORD_CHARS_MAX = 40;

const WORD_PATTERN = /[\p{L}\p{N}]+/gu;

/** Lower-cased letter/digit runs of `text`, NFKC-normalised, possessive 's dropped. */
export function wordsOf(text: string): string[] {
  const words: string[] = [];
  const normalised = text.normalize("NFKC").toLowerCase();
  for (const match of normalised.matchAll(WORD_PATTERN)) {
    const word = match[0];
    if (word.length > WORD_CHARS_MAX) continue;
    // "driver's" splits into "driver" + "s"; the lone "s" is the possessive, not a word.
    if (word === "s" && match.index > 0 && "'’".includes(normalised[match.index - 1]!)) continue;
    words.push(word);
  }
  return words;
}

const VOWEL = /[aeiou]/;

function isConsonant(word: string, i: number): boolean {
  const c = word[i]!;
  if ("aeiou".includes(c)) return false;
  if (c === "y") return i === 0 || !isConsonant(word, i - 1);
  return true;
}

/** Porter's measure m: the number of vowel-consonant sequences in `stem`. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  while (i < stem.length && isConsonant(stem, i)) i++;
  while (i < stem.length) {
    while (i < stem.length && !isConsonant(stem, i)) i++;
    if (i >= stem.length) break;
    m++;
    while (i < stem.length && isConsonant(stem, i)) i++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(word: string): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

/** Consonant-vowel-consonant ending, last not w/x/y (Porter's *o condition). */
function endsCvc(word: string): boolean {
  const n = word.length;
  if (n < 3) return false;
  const last = word[n - 1]!;
  return isConsonant(word, n - 3) && !isConsonant(word, n - 2) && isConsonant(word, n - 1) && !"wxy".includes(last);
}

/**
 * Porter steps 1a–1c only: undoes plurals, -ed and -ing (notifies/notified/notifying →
 * notifi) without the derivational steps that merge unrelated words (general → gener).
 * Digits and non-ASCII words pass through unchanged.
 */
export function stem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word) || !VOWEL.test(word)) return word;
  let w = word;
  // Step 1a: plurals.
  if (w.endsWith("sses") || /(ch|sh|x|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("ss")) {
    // unchanged
  } else if (w.endsWith("s") && w.length > 3) w = w.slice(0, -1);
  // Step 1b: -eed, -ed, -ing.
  let strippedSuffix = false;
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith("ed") && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    strippedSuffix = true;
  } else if (w.endsWith("ing") && hasVowel(w.slice(0, -3)) && w.length > 5) {
    w = w.slice(0, -3);
    strippedSuffix = true;
  }
  if (strippedSuffix) {
    if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
    else if (endsDoubleConsonant(w) && !"lsz".includes(w[w.length - 1]!)) w = w.slice(0, -1);
    else if (measure(w) === 1 && endsCvc(w)) w += "e";
  }
  // Step 1c: terminal y → i when the stem has a vowel (notify/notifies meet at "notifi").
  if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;
  return w;
}
