/**
 * Builds the shipped sample corpus from the public texts in ../shared/corpus (see
 * data/corpus/SOURCES.md): GDPR (eu), 12 CFR 1003 (us) and 50 state breach statutes
 * (us-<code>). Run by scripts/build-sample-corpus.ts; the product imports the output.
 */
import { join } from "node:path";
import { CFR_SOURCE, parseCfrText } from "./cfr";
import { GDPR_SOURCE, parseGdprFormex } from "./gdpr";
import type { CorpusJurisdiction, CorpusPassage } from "./passages";
import { STATE_STATUTES, parseStateStatute } from "./statutes";
import { chunkBlocks, type ChunkedPassage } from "./structure";

/** A chunk as a corpus passage field set: an untitled provision carries no `title`. */
function fields({ title, ...chunk }: ChunkedPassage): Omit<ChunkedPassage, "title"> & { title?: string } {
  return title === "" ? chunk : { ...chunk, title };
}

export interface SampleCorpus {
  jurisdictions: CorpusJurisdiction[];
  passages: CorpusPassage[];
}

export async function buildSampleCorpus(sourceDir: string): Promise<SampleCorpus> {
  const jurisdictions: CorpusJurisdiction[] = [];
  const passages: CorpusPassage[] = [];

  const gdpr = chunkBlocks(parseGdprFormex(await Bun.file(join(sourceDir, "eu-gdpr/gdpr-consolidated-en.xml")).text()));
  jurisdictions.push({
    slug: "eu",
    name: "European Union",
    description: "EU law: Regulation (EU) 2016/679, the General Data Protection Regulation (consolidated English text).",
  });
  passages.push(...gdpr.map((c) => ({ document: "eu-gdpr", source: GDPR_SOURCE, ...fields(c), jurisdictions: ["eu"] })));

  const cfr = chunkBlocks(parseCfrText(await Bun.file(join(sourceDir, "us-cfr-hmda/hmda_reg_c_12cfr1003.txt")).text()));
  jurisdictions.push({
    slug: "us",
    name: "United States (federal)",
    description: "US federal regulation: 12 CFR Part 1003, Home Mortgage Disclosure (Regulation C), with its appendices and staff commentary.",
  });
  passages.push(...cfr.map((c) => ({ document: "us-cfr-1003", source: CFR_SOURCE, ...fields(c), jurisdictions: ["us"] })));

  for (const state of STATE_STATUTES) {
    const blocks = parseStateStatute(state, await Bun.file(join(sourceDir, "us-state-breach", `${state.file}.txt`)).text());
    const sections = [...new Set(blocks.map((b) => b.path[0]!))];
    const cited = sections.length === 1 ? sections[0]! : `${sections[0]} to ${sections[sections.length - 1]!.replace(/^.*§ /, "§ ")}`;
    const slug = `us-${state.code}`;
    const source = `${state.name} data breach notification law (${cited})`;
    jurisdictions.push({
      slug,
      name: state.name,
      description: `${state.name} data breach notification statute: ${cited}.`,
    });
    passages.push(
      ...chunkBlocks(blocks).map((c) => ({ document: `${slug}-breach`, source, ...fields(c), jurisdictions: [slug] })),
    );
  }
  return { jurisdictions, passages };
}
