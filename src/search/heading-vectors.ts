/** Embeddings of passage headings for the ranker's titleCosine: each heading is embedded once per index. */
import type { ChunkRow } from "./chunk-store";
import type { Embedder } from "./embedder/types";

const HEADING_VECTORS_CACHED_MAX = 20_000;

export class HeadingVectorCache {
  /** Keyed by the heading itself: every passage of a provision shares it. */
  readonly #vectors = new Map<string, Float32Array>();

  constructor(private readonly embedder: Embedder) {}

  async of(rows: readonly ChunkRow[]): Promise<{ hash: string; vector: Float32Array }[]> {
    const headingOf = (r: ChunkRow) => r.heading || r.citation_path;
    const missing = [...new Map(rows.filter((r) => !this.#vectors.has(headingOf(r))).map((r) => [headingOf(r), r])).values()];
    if (missing.length > 0) {
      const vectors = await this.embedder.embed(missing.map(headingOf));
      if (this.#vectors.size + missing.length > HEADING_VECTORS_CACHED_MAX) this.#vectors.clear();
      missing.forEach((r, i) => this.#vectors.set(headingOf(r), vectors[i]!));
    }
    return rows.map((r) => ({ hash: r.content_hash, vector: this.#vectors.get(headingOf(r))! }));
  }
}
