import type { EmbedderConfig } from "../../embedder-settings";
import { OpenAiCompatibleEmbedder } from "./openai-compatible.ts";
import { StaticEmbedder } from "./static.ts";
import type { Embedder } from "./types.ts";

export type { Embedder } from "./types.ts";
export { StaticEmbedder } from "./static.ts";
export { OpenAiCompatibleEmbedder } from "./openai-compatible.ts";

export {
  EMBEDDER_BATCH_TEXTS_DEFAULT,
  EMBEDDER_KINDS,
  EMBEDDER_TIMEOUT_MS_DEFAULT,
  EMBEDDER_TIMEOUT_MS_MAX,
  embedderConfigFromEnv,
  type EmbedderConfig,
  type EmbedderKind,
} from "../../embedder-settings";

/** Builds the configured embedder. The openai kind contacts its server once if no dimensions are set. */
export async function createEmbedder(config: EmbedderConfig): Promise<Embedder> {
  switch (config.kind) {
    case "static":
      return StaticEmbedder.load();
    case "use-lite": {
      // Imported on demand: TF.js and the 28 MB model load only when this embedder is chosen.
      const { UseLiteEmbedder } = await import("./use-lite.ts");
      return UseLiteEmbedder.load();
    }
    case "openai": {
      if (!config.url || !config.model) throw new Error("openai embedder needs url and model");
      const connection = { baseUrl: config.url, model: config.model, apiKey: config.apiKey, timeoutMs: config.timeoutMs, batchTextsMax: config.batchTextsMax };
      const dimensions = config.dimensions ?? (await OpenAiCompatibleEmbedder.probeDimensions(connection));
      return new OpenAiCompatibleEmbedder({ ...connection, dimensions, requestDimensions: config.dimensions !== undefined });
    }
  }
}
