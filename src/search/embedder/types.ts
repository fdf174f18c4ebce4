/**
 * Turns text into fixed-size vectors. Implementations: the distilled static table
 * (default, microseconds per query), the USE-lite teacher, and an OpenAI-compatible
 * HTTP endpoint inside the operator's network.
 */
export interface Embedder {
  /** Stable model id recorded in the database; a change triggers a re-embed. */
  readonly id: string;
  readonly dimensions: number;
  /** Unit-length vectors, one per input, same order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
