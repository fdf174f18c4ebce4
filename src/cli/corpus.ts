import { importPassages, importSampleCorpus, loadCorpusPath, type ImportProgress, type ImportSummary } from "../search/corpus/import";
import { reembedAll } from "../search/service";
import { CliError } from "./args";
import type { Command } from "./command";

const BAR_WIDTH = 30;

/** A one-line progress bar on stderr, redrawn in place; only used on a terminal. */
function progressBar(label: string): { update(p: ImportProgress): void; done(): void } {
  let last = "";
  return {
    update({ doneChunks, totalChunks }) {
      const ratio = totalChunks === 0 ? 1 : doneChunks / totalChunks;
      const filled = Math.round(ratio * BAR_WIDTH);
      const line = `${label} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${doneChunks}/${totalChunks} passages`;
      if (line === last) return;
      last = line;
      process.stderr.write(`\r${line}`);
    },
    done() {
      if (last !== "") process.stderr.write("\n");
    },
  };
}

function summaryLine(s: ImportSummary): string {
  const seconds = s.elapsedMs / 1000;
  const total = s.chunksAdded + s.chunksUnchanged;
  const rate = seconds > 0 ? Math.round(s.chunksAdded / seconds) : s.chunksAdded;
  return (
    `imported ${s.documents} documents, ${total} passages (${s.chunksAdded} new or changed, ${s.chunksUnchanged} unchanged, ` +
    `${s.chunksRemoved} removed), ${s.jurisdictions} jurisdictions in ${seconds.toFixed(1)} s (${rate} passages/s)`
  );
}

export const corpusCommands: Command[] = [
  {
    name: "corpus import",
    summary: "Import the sample corpus (--sample) or passages from PATH into the shared knowledge base",
    usage: "regkb corpus import (--sample | PATH)",
    flags: { sample: "boolean" },
    async run({ flags, positionals, config, deps, interactive }) {
      const sample = flags.sample === true;
      if (sample === (positionals.length === 1) || positionals.length > 1) {
        throw new CliError("give either --sample or one PATH (a .jsonl file of passages or a folder with manifest.json)");
      }
      const d = await deps();
      const bar = interactive ? progressBar("importing") : undefined;
      const summary = sample
        ? await importSampleCorpus(d, bar?.update)
        : await importPassages(d, await loadCorpusPath(positionals[0]!, () => d.pdf), bar?.update);
      bar?.done();
      return { json: summary, text: summaryLine(summary) };
    },
  },
  {
    name: "corpus re-embed",
    summary: "Recompute every passage's vector with the configured embedder (after changing model or dimensions)",
    usage: "regkb corpus re-embed",
    flags: {},
    async run({ deps, interactive }) {
      const d = await deps();
      const bar = interactive ? progressBar("re-embedding") : undefined;
      const started = performance.now();
      const { chunks } = await reembedAll(d, bar?.update);
      bar?.done();
      const elapsedMs = Math.round(performance.now() - started);
      return {
        json: { chunks, embedderId: d.embedder.id, dimensions: d.embedder.dimensions, elapsedMs },
        text: `re-embedded ${chunks} passages with ${d.embedder.id} (${d.embedder.dimensions}-d) in ${(elapsedMs / 1000).toFixed(1)} s`,
      };
    },
  },
];
