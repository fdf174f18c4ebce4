/** Reads data/lexicon/glossary.tsv: plain <TAB> legal <TAB> source, "#" comments. */
import { existsSync } from "node:fs";

export interface GlossaryLine {
  plain: string;
  legal: string;
  source: string;
}

export async function readGlossary(path: string): Promise<GlossaryLine[]> {
  if (!existsSync(path)) return [];
  return (await Bun.file(path).text())
    .split("\n")
    .filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => {
      const [plain = "", legal = "", source = ""] = l.split("\t").map((c) => c.trim());
      return { plain: plain.toLowerCase(), legal: legal.toLowerCase(), source };
    })
    .filter((g) => g.plain !== "" && g.legal !== "");
}
