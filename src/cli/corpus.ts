import { importPassages, importSampleCorpus, loadCorpusPath, type ImportProgress, type ImportSummary } from "../search/corpus/import";
import { maintainSearchIndex, reembedAll, type MaintenanceReport } from "../search/maintenance";
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

/** What maintenance did, or "" when nothing was due. */
function maintenanceText(r: MaintenanceReport): string {
  const done = [
    r.reembeddedPassages === undefined ? "" : `re-embedded ${r.reembeddedPassages} passages`,
    r.rebuiltVectors === undefined ? "" : `rebuilt ${r.rebuiltVectors} vector rows`,
    r.markedPassages === undefined ? "" : `marked ${r.markedPassages} organisation passages`,
    r.clustered === undefined ? "" : `clustered ${r.clustered.vectors} vectors into ${r.clustered.clusters} clusters`,
  ].filter((s) => s !== "");
  return done.length === 0 ? "" : `search index: ${done.join(", ")}`;
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
      const corpus = sample ? undefined : await loadCorpusPath(positionals[0]!, () => d.pdf);
      // Before: the index must be ready to write; after: a corpus that grew gets clustered.
      const before = await maintainSearchIndex(d);
      const bar = interactive ? progressBar("importing") : undefined;
      const summary = corpus === undefined ? await importSampleCorpus(d, bar?.update) : await importPassages(d, corpus, bar?.update);
      bar?.done();
      const maintenance = { ...before, ...(await maintainSearchIndex(d)) };
      const done = maintenanceText(maintenance);
      return { json: { ...summary, maintenance }, text: done === "" ? summaryLine(summary) : `${summaryLine(summary)}; ${done}` };
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
      const { chunks } = await reembedAll(d.searchIndex, bar?.update);
      bar?.done();
      // The new vectors are unclustered, and organisation passages are marked again.
      await maintainSearchIndex(d);
      const elapsedMs = Math.round(performance.now() - started);
      return {
        json: { chunks, embedderId: d.embedder.id, dimensions: d.embedder.dimensions, elapsedMs },
        text: `re-embedded ${chunks} passages with ${d.embedder.id} (${d.embedder.dimensions}-d) in ${(elapsedMs / 1000).toFixed(1)} s`,
      };
    },
  },
  {
    name: "corpus maintain",
    summary: "Bring the search index up to date (regkb serve does this before it listens): re-embed after a built-in embedder changed, rebuild the vector table, cluster a grown corpus",
    usage: "regkb corpus maintain",
    flags: {},
    async run({ deps, interactive }) {
      const d = await deps();
      const bar = interactive ? progressBar("re-embedding") : undefined;
      const report = await maintainSearchIndex(d, bar?.update);
      bar?.done();
      return { json: report, text: maintenanceText(report) || "search index: nothing to do" };
    },
  },
];
