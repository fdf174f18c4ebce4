import type { Database } from "bun:sqlite";
import { createLogger } from "../../src/log";
import { createEmbedder } from "../../src/search/embedder/index";
import type { Embedder } from "../../src/search/embedder/types";
import { maintainSearchIndex, type MaintenanceReport } from "../../src/search/maintenance";
import { SearchIndex } from "../../src/search/search-index";

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
