/**
 * Regenerates data/corpus/{passages.jsonl,jurisdictions.json} from the public texts in
 * ../shared/corpus. The output is committed and embedded in the binary, so the product
 * never needs the source folder. Usage: bun scripts/build-sample-corpus.ts [SOURCE_DIR]
 */
import { join, resolve } from "node:path";
import { buildSampleCorpus } from "../src/search/corpus/sample-sources";
import { wordCount } from "../src/search/corpus/structure";

const sourceDir = resolve(process.argv[2] ?? join(import.meta.dir, "../../shared/corpus"));
const outDir = join(import.meta.dir, "../data/corpus");
const corpus = await buildSampleCorpus(sourceDir);
await Bun.write(join(outDir, "passages.jsonl"), corpus.passages.map((p) => JSON.stringify(p)).join("\n") + "\n");
await Bun.write(join(outDir, "jurisdictions.json"), JSON.stringify(corpus.jurisdictions, null, 2) + "\n");
const words = corpus.passages.map((p) => wordCount(p.text)).sort((a, b) => a - b);
console.log(
  `${corpus.passages.length} passages, ${corpus.jurisdictions.length} jurisdictions; words per passage median ${words[words.length >> 1]}, max ${words[words.length - 1]}`,
);
