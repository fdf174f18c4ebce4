import { afterAll, describe, expect, test } from "bun:test";
import { createEmbedder, embedderConfigFromEnv } from "../../src/search/embedder/index.ts";
import { OpenAiCompatibleEmbedder } from "../../src/search/embedder/openai-compatible.ts";
import { dot } from "../../src/search/embedder/vector.ts";

type Seen = { authorization: string | null; body: { model: string; input: string[]; dimensions?: number } };
const seen: Seen[] = [];
/** How the fake server misbehaves, chosen per test by the model name. */
const server = Bun.serve({
  port: 0,
  async fetch(request) {
    if (new URL(request.url).pathname !== "/v1/embeddings" || request.method !== "POST") return new Response("not found", { status: 404 });
    const body = (await request.json()) as Seen["body"];
    seen.push({ authorization: request.headers.get("authorization"), body });
    const size = body.dimensions ?? 3;
    // Deterministic, distinct, not unit length: the embedder must normalise.
    const data = body.input.map((text, index) => ({ index, embedding: Array.from({ length: size }, (_, d) => text.length + d + 1) }));
    switch (body.model) {
      case "reversed":
        return Response.json({ data: [...data].reverse() });
      case "short":
        return Response.json({ data: data.slice(1) });
      case "nan":
        return new Response(`{"data":[{"index":0,"embedding":[1,"x",2]}]}`, { headers: { "content-type": "application/json" } });
      case "error":
        return new Response("model overloaded", { status: 503 });
      case "slow":
        await Bun.sleep(2_000);
        return Response.json({ data });
      default:
        return Response.json({ data });
    }
  },
});
afterAll(() => server.stop(true));
const baseUrl = `http://127.0.0.1:${server.port}/v1`;

function embedder(model: string, extra: Partial<ConstructorParameters<typeof OpenAiCompatibleEmbedder>[0]> = {}) {
  return new OpenAiCompatibleEmbedder({ baseUrl, model, dimensions: 3, requestDimensions: false, timeoutMs: 5_000, batchTextsMax: 2, ...extra });
}

describe("OpenAiCompatibleEmbedder", () => {
  test("batches, keeps order, normalises and sends the bearer key", async () => {
    seen.length = 0;
    const vectors = await embedder("m", { apiKey: "sk-test" }).embed(["a", "bb", "ccc", ""]);
    expect(seen.map((s) => s.body.input)).toEqual([["a", "bb"], ["ccc", " "]]);
    expect(seen.every((s) => s.authorization === "Bearer sk-test" && s.body.model === "m")).toBe(true);
    expect(vectors.map((v) => Math.round(dot(v, v) * 1e6))).toEqual([1e6, 1e6, 1e6, 1e6]);
    expect(vectors[2]![0]).toBeCloseTo(4 / Math.hypot(4, 5, 6), 6);
  });

  test("uses the response index, not its order", async () => {
    const [a, b] = await embedder("reversed").embed(["a", "bb"]);
    expect(a![0]).toBeCloseTo(2 / Math.hypot(2, 3, 4), 6);
    expect(b![0]).toBeCloseTo(3 / Math.hypot(3, 4, 5), 6);
  });

  test("rejects wrong counts, wrong sizes, non-numbers, HTTP errors and timeouts", async () => {
    await expect(embedder("short").embed(["a", "b"])).rejects.toThrow(/1 embeddings for 2 inputs/);
    await expect(embedder("m", { dimensions: 4 }).embed(["a"])).rejects.toThrow(/3 dimensions, expected 4/);
    await expect(embedder("nan").embed(["a"])).rejects.toThrow(/non-finite/);
    await expect(embedder("error").embed(["a"])).rejects.toThrow(/HTTP 503: model overloaded/);
    await expect(embedder("slow", { timeoutMs: 200 }).embed(["a"])).rejects.toThrow(/timed out after 200 ms/);
  });

  test("the factory probes dimensions when unset and sends them when set", async () => {
    const env = { REGKB_EMBEDDER: "openai", REGKB_EMBEDDER_URL: baseUrl, REGKB_EMBEDDER_MODEL: "m" };
    const probed = await createEmbedder(embedderConfigFromEnv(env));
    expect([probed.id, probed.dimensions]).toEqual(["openai-compatible:m:3", 3]);
    seen.length = 0;
    const sized = await createEmbedder(embedderConfigFromEnv({ ...env, REGKB_EMBEDDER_DIMENSIONS: "5" }));
    expect((await sized.embed(["a"]))[0]!.length).toBe(5);
    expect(seen[0]!.body.dimensions).toBe(5);
  });

  test("config from env validates its inputs", () => {
    expect(embedderConfigFromEnv({}).kind).toBe("static");
    expect(() => embedderConfigFromEnv({ REGKB_EMBEDDER: "bert" })).toThrow(/REGKB_EMBEDDER must be one of/);
    expect(() => embedderConfigFromEnv({ REGKB_EMBEDDER: "openai", REGKB_EMBEDDER_MODEL: "m" })).toThrow(/REGKB_EMBEDDER_URL/);
    expect(() => embedderConfigFromEnv({ REGKB_EMBEDDER: "openai", REGKB_EMBEDDER_URL: baseUrl })).toThrow(/REGKB_EMBEDDER_MODEL/);
    expect(() => embedderConfigFromEnv({ REGKB_EMBEDDER_BATCH_SIZE: "0" })).toThrow(/1\.\.2048/);
  });
});
