/**
 * The texts a passage is indexed as: what it is embedded as, its BM25 columns, and its
 * fields as the ranker's BM25F reads them (the same as its BM25 row's).
 */
import { jurisdictionsOfRow, type ChunkRow, type NewChunk } from "./chunk-store";
import type { FtsText } from "./fts-store";
import type { CandidateText } from "./rank/features";

/** The text a passage is embedded as: where it applies and what it is about, then the words. */
export function embeddingText(heading: string, content: string, jurisdictions: readonly string[], names: Map<string, string>): string {
  const where = jurisdictions.map((s) => names.get(s) ?? s).join(", ");
  return [where, heading, content].filter((s) => s !== "").join("\n");
}

/** BM25 columns of a passage: where it applies (names and slugs), its source and citation; heading; text. */
export function ftsText(chunk: Pick<NewChunk, "jurisdictions" | "source" | "citationPath" | "heading" | "content">, names: Map<string, string>): FtsText {
  const where = chunk.jurisdictions.map((s) => `${names.get(s) ?? ""} ${s}`).join(" ");
  return { citation: `${where} ${chunk.source} ${chunk.citationPath}`, heading: chunk.heading, body: chunk.content };
}

/** BM25 columns of a stored passage. */
export function ftsTextOfRow(row: ChunkRow, names: Map<string, string>): FtsText {
  return ftsText({ jurisdictions: jurisdictionsOfRow(row), source: row.source, citationPath: row.citation_path, heading: row.heading, content: row.content }, names);
}

/** A passage's fields as the ranker's BM25F reads them (the same as its BM25 row's). */
export function candidateTextOf(row: ChunkRow, names: Map<string, string>): CandidateText {
  return {
    contentHash: row.content_hash,
    citation: ftsTextOfRow(row, names).citation,
    heading: row.heading,
    title: row.title,
    body: row.content,
    jurisdictions: jurisdictionsOfRow(row),
  };
}
