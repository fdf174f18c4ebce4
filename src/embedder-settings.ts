// The embedder's settings (REGKB_EMBEDDER and its options), parsed without loading an
// embedder: config.ts reads them at start-up, search/embedder/index.ts builds from them.

/** Texts per request the OpenAI-compatible embedder may send, and the largest vector it accepts. */
export const OPENAI_BATCH_TEXTS_MAX = 2_048;
export const OPENAI_DIMENSIONS_MAX = 8_192;

export const EMBEDDER_KINDS = ["static", "use-lite", "openai"] as const;
export type EmbedderKind = (typeof EMBEDDER_KINDS)[number];

export type EmbedderConfig = {
  kind: EmbedderKind;
  /** openai only: base URL; requests go to `${url}/embeddings`. */
  url?: string;
  /** openai only. */
  model?: string;
  /** openai only; never logged. */
  apiKey?: string;
  /** openai only: expected size, sent as `dimensions`; unset = the model's own size, probed at start. */
  dimensions?: number;
  /** openai only. */
  timeoutMs: number;
  /** openai only: texts per request. */
  batchTextsMax: number;
};

export const EMBEDDER_TIMEOUT_MS_DEFAULT = 30_000;
export const EMBEDDER_TIMEOUT_MS_MAX = 600_000;
export const EMBEDDER_BATCH_TEXTS_DEFAULT = 64;

function intInRange(env: Record<string, string | undefined>, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) throw new Error(`${name} must be an integer in ${min}..${max}, got "${raw}"`);
  return value;
}

/**
 * Reads REGKB_EMBEDDER (static | use-lite | openai, default static), and for openai
 * REGKB_EMBEDDER_URL, REGKB_EMBEDDER_MODEL (both required), REGKB_EMBEDDER_API_KEY,
 * REGKB_EMBEDDER_DIMENSIONS, REGKB_EMBEDDER_TIMEOUT_MS, REGKB_EMBEDDER_BATCH_SIZE.
 */
export function embedderConfigFromEnv(env: Record<string, string | undefined>): EmbedderConfig {
  const kind = (env.REGKB_EMBEDDER || "static") as EmbedderKind;
  if (!EMBEDDER_KINDS.includes(kind)) throw new Error(`REGKB_EMBEDDER must be one of ${EMBEDDER_KINDS.join(", ")}, got "${kind}"`);
  const config: EmbedderConfig = {
    kind,
    timeoutMs: intInRange(env, "REGKB_EMBEDDER_TIMEOUT_MS", 100, EMBEDDER_TIMEOUT_MS_MAX) ?? EMBEDDER_TIMEOUT_MS_DEFAULT,
    batchTextsMax: intInRange(env, "REGKB_EMBEDDER_BATCH_SIZE", 1, OPENAI_BATCH_TEXTS_MAX) ?? EMBEDDER_BATCH_TEXTS_DEFAULT,
  };
  if (kind !== "openai") return config;
  const url = env.REGKB_EMBEDDER_URL;
  if (!url || !/^https?:\/\//.test(url)) throw new Error("REGKB_EMBEDDER=openai needs REGKB_EMBEDDER_URL (http:// or https://)");
  if (!env.REGKB_EMBEDDER_MODEL) throw new Error("REGKB_EMBEDDER=openai needs REGKB_EMBEDDER_MODEL");
  return {
    ...config,
    url,
    model: env.REGKB_EMBEDDER_MODEL,
    apiKey: env.REGKB_EMBEDDER_API_KEY || undefined,
    dimensions: intInRange(env, "REGKB_EMBEDDER_DIMENSIONS", 1, OPENAI_DIMENSIONS_MAX),
  };
}
