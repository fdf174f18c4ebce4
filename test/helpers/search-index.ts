import type { Database } from "bun:sqlite";
import { openDatabase } from "../../src/db/open";
import { createLogger } from "../../src/log";
import { importSampleCorpus } from "../../src/search/corpus/import";
import { createEmbedder } from "../../src/search/embedder/index";
import type { Embedder } from "../../src/search/embedder/types";
import { maintainSearchIndex, type MaintenanceReport } from "../../src/search/maintenance";
import { SearchIndex } from "../../src/search/search-index";
import { tempDir } from "./server";

/** The default (static) embedder, as tests build their own indexes with. */
export function staticEmbedder(): Promise<Embedder> {
  return createEmbedder({ kind: "static", timeoutMs: 30_000, batchTextsMax: 64 });
}

/** Maintenance as `regkb serve` runs it with a built-in embedder, without log lines. */
export function maintain(searchIndex: SearchIndex): Promise<MaintenanceReport> {
  return maintainSearchIndex({ searchIndex, config: { embedder: { kind: "static" } }, log: createLogger("silent") });
}

/** A SearchIndex over `db` (static embedder unless given), maintained and so ready to write and search. */
export async function readySearchIndex(db: Database, embedder?: Embedder): Promise<SearchIndex> {
  const searchIndex = new SearchIndex(db, embedder ?? (await staticEmbedder()));
  await maintain(searchIndex);
  return searchIndex;
}

/** A new data folder holding the sample corpus, indexed, and `orgIds` as organisations: where search tests start. */
export async function sampleCorpusIndex(orgIds: readonly string[]): Promise<{ dir: string; db: Database; searchIndex: SearchIndex }> {
  const dir = tempDir();
  const db = await openDatabase(dir);
  const searchIndex = await readySearchIndex(db);
  await importSampleCorpus({ searchIndex });
  for (const org of orgIds) db.query("INSERT INTO organisations (id, name, created_at_ms) VALUES (?, ?, 0)").run(org, org);
  return { dir, db, searchIndex };
}
