/**
 * Turns text into fixed-size vectors. Implementations: the trained static table
 * (default, microseconds per query), the USE-lite teacher, and an OpenAI-compatible
 * HTTP endpoint inside the operator's network.
 */
export interface Embedder {
  /** Stable model id recorded in the database; a change triggers a re-embed. */
  readonly id: string;
  readonly dimensions: number;
  /**
   * Leading dimensions the quantized KNN shortlist compares before full-precision
   * re-scoring: all of them, or fewer when the dimensions come in decreasing variance.
   */
  readonly shortlistDimensions: number;
  /** Unit-length vectors, one per input, same order. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}
