import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { UseLiteEmbedder } from "../../src/search/embedder/use-lite.ts";

const DIMENSIONS = 512;
/** Texts per teacher call: big enough to amortise the call, small enough to report progress. */
const BATCH_TEXTS = 256;

/**
 * Teacher vectors keyed by text, persisted in `dir` so re-running the distillation with other
 * parameters costs seconds instead of minutes of USE-lite inference.
 */
export class TeacherCache {
  private readonly vectors = new Map<string, Float32Array>();
  private dirty = false;

  constructor(private readonly dir: string) {
    const textsPath = join(dir, "texts.json");
    if (!existsSync(textsPath)) return;
    const texts = JSON.parse(readFileSync(textsPath, "utf8")) as string[];
    const floats = new Float32Array(readFileSync(join(dir, "vectors.f32")).buffer.slice(0));
    if (floats.length !== texts.length * DIMENSIONS) throw new Error(`teacher cache in ${dir} is corrupt; delete it`);
    texts.forEach((t, i) => this.vectors.set(t, floats.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)));
  }

  async embedAll(teacher: () => Promise<UseLiteEmbedder>, texts: readonly string[], label: string): Promise<Float32Array[]> {
    // Sorted by length: the teacher pads each batch to its longest text.
    const missing = [...new Set(texts.filter((t) => !this.vectors.has(t)))].sort((a, b) => a.length - b.length);
    if (missing.length > 0) {
      const model = await teacher();
      const startedMs = performance.now();
      for (let i = 0; i < missing.length; i += BATCH_TEXTS) {
        const batch = missing.slice(i, i + BATCH_TEXTS);
        const vectors = await model.embed(batch);
        batch.forEach((t, j) => this.vectors.set(t, vectors[j]!));
        const done = Math.min(i + BATCH_TEXTS, missing.length);
        process.stderr.write(`\r${label}: ${done}/${missing.length} (${((performance.now() - startedMs) / 1000).toFixed(0)} s)`);
      }
      process.stderr.write("\n");
      this.dirty = true;
      this.save();
    }
    return texts.map((t) => this.vectors.get(t)!);
  }

  save(): void {
    if (!this.dirty) return;
    mkdirSync(this.dir, { recursive: true });
    const texts = [...this.vectors.keys()];
    const floats = new Float32Array(texts.length * DIMENSIONS);
    texts.forEach((t, i) => floats.set(this.vectors.get(t)!, i * DIMENSIONS));
    writeFileSync(join(this.dir, "vectors.f32"), floats);
    writeFileSync(join(this.dir, "texts.json"), JSON.stringify(texts));
    this.dirty = false;
  }
}
