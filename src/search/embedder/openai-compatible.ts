import { OPENAI_BATCH_TEXTS_MAX, OPENAI_DIMENSIONS_MAX } from "../../embedder-settings";
import type { Embedder } from "./types.ts";
import { l2Normalise } from "./vector.ts";

/** Most hosted and self-hosted embedding models accept about 8k tokens; cut well before. */
export const OPENAI_TEXT_CHARS_MAX = 16_000;
/** A response body beyond this for one batch is not an embeddings response. */
const RESPONSE_BYTES_BASE_MAX = 1_000_000;
const RESPONSE_BYTES_PER_FLOAT_MAX = 32;
/** Error bodies are echoed into messages only this far (they may be HTML pages). */
const ERROR_BODY_CHARS_MAX = 300;

export type OpenAiCompatibleOptions = {
  /** Base URL, e.g. http://embeddings.internal:8080/v1 ; requests go to `${baseUrl}/embeddings`. */
  baseUrl: string;
  model: string;
  apiKey?: string;
  /** Expected vector size. Sent as `dimensions` only when `requestDimensions` is true. */
  dimensions: number;
  requestDimensions: boolean;
  timeoutMs: number;
  batchTextsMax: number;
};

type EmbeddingsResponse = { data: { index: number; embedding: number[] }[] };

/**
 * Any server speaking the OpenAI embeddings API (vLLM, llama.cpp, Ollama, TEI, LiteLLM, a
 * hosted endpoint) inside the operator's network. Vectors are validated and L2-normalised.
 */
export class OpenAiCompatibleEmbedder implements Embedder {
  readonly id: string;
  readonly dimensions: number;
  readonly shortlistDimensions: number;
  private readonly url: string;

  constructor(private readonly options: OpenAiCompatibleOptions) {
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1 || options.dimensions > OPENAI_DIMENSIONS_MAX) {
      throw new Error(`embedder dimensions must be 1..${OPENAI_DIMENSIONS_MAX}, got ${options.dimensions}`);
    }
    if (!Number.isInteger(options.batchTextsMax) || options.batchTextsMax < 1 || options.batchTextsMax > OPENAI_BATCH_TEXTS_MAX) {
      throw new Error(`embedder batch size must be 1..${OPENAI_BATCH_TEXTS_MAX}, got ${options.batchTextsMax}`);
    }
    this.url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`;
    this.dimensions = options.dimensions;
    this.shortlistDimensions = options.dimensions;
    // The URL is left out: moving the same model to another host must not force a re-embed.
    this.id = `openai-compatible:${options.model}:${options.dimensions}`;
  }

  /** Asks the server once for the model's vector size (used when none is configured). */
  static async probeDimensions(options: Omit<OpenAiCompatibleOptions, "dimensions" | "requestDimensions">): Promise<number> {
    const probe = new OpenAiCompatibleEmbedder({ ...options, dimensions: OPENAI_DIMENSIONS_MAX, requestDimensions: false });
    const [vector] = await probe.request(["dimension probe"], null);
    return vector!.length;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += this.options.batchTextsMax) {
      out.push(...(await this.request(texts.slice(start, start + this.options.batchTextsMax), this.dimensions)));
    }
    return out;
  }

  /** One POST; `expectedDimensions` null accepts any consistent size (the probe). */
  private async request(texts: readonly string[], expectedDimensions: number | null): Promise<Float32Array[]> {
    const body: Record<string, unknown> = {
      model: this.options.model,
      // Servers reject empty strings; a space embeds as "nothing" on every model we know.
      input: texts.map((t) => t.slice(0, OPENAI_TEXT_CHARS_MAX) || " "),
      encoding_format: "float",
    };
    if (this.options.requestDimensions) body.dimensions = this.options.dimensions;
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let response: Response;
    try {
      response = await fetch(this.url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      const reason = error instanceof Error && error.name === "TimeoutError" ? `timed out after ${this.options.timeoutMs} ms` : String(error);
      throw new Error(`embeddings request to ${this.url} failed: ${reason}`);
    }
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`embeddings request to ${this.url} failed: HTTP ${response.status}: ${text.slice(0, ERROR_BODY_CHARS_MAX)}`);
    }
    const bytesMax = RESPONSE_BYTES_BASE_MAX + texts.length * (expectedDimensions ?? OPENAI_DIMENSIONS_MAX) * RESPONSE_BYTES_PER_FLOAT_MAX;
    if (text.length > bytesMax) throw new Error(`embeddings response from ${this.url} is larger than ${bytesMax} bytes`);
    return this.parse(text, texts.length, expectedDimensions);
  }

  private parse(text: string, count: number, expectedDimensions: number | null): Float32Array[] {
    const invalid = (why: string): never => {
      throw new Error(`embeddings response from ${this.url} is invalid: ${why}`);
    };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      invalid("not JSON");
    }
    const data = (json as Partial<EmbeddingsResponse> | null)?.data;
    if (!Array.isArray(data)) return invalid("no data array");
    if (data.length !== count) invalid(`${data.length} embeddings for ${count} inputs`);
    const out: (Float32Array | undefined)[] = new Array(count);
    const size = expectedDimensions ?? (data[0] as { embedding?: unknown[] } | undefined)?.embedding?.length ?? 0;
    data.forEach((item, position) => {
      // `index` is optional on some servers; without it, response order is input order.
      const index = typeof item?.index === "number" ? item.index : position;
      if (!Number.isInteger(index) || index < 0 || index >= count || out[index]) invalid(`bad or repeated index ${index}`);
      const embedding = item?.embedding;
      if (!Array.isArray(embedding) || embedding.length !== size) invalid(`embedding ${index} has ${embedding?.length} dimensions, expected ${size}`);
      const vector = Float32Array.from(embedding as number[]);
      if (!vector.every(Number.isFinite)) invalid(`embedding ${index} has a non-finite value`);
      if (!vector.some((x) => x !== 0)) invalid(`embedding ${index} is all zeros`);
      out[index] = l2Normalise(vector);
    });
    return out as Float32Array[];
  }
}
