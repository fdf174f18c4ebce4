import { backgroundServices } from "../background";
import { importSampleCorpus } from "../search/corpus/import";
import { maintainSearchIndex } from "../search/maintenance";
import { startServer } from "../server";
import type { Config } from "../config";
import { closeDatabases, type Deps } from "../deps";
import { CliError, type ParsedFlags } from "./args";
import { lockDataDir } from "./data-dir";
import type { Command, CommandResult } from "./command";
import { ensureDemo } from "./demo";

export const serveCommands: Command[] = [
  {
    name: "serve",
    summary: "Run the HTTP API, dashboard and background workers (--demo: sample corpus + demo organisation; --init: a new database beside an earlier install's files)",
    usage: "regkb serve [--port 8080] [--host 127.0.0.1] [--demo] [--init]",
    // --port, --host and --init are read into the config by the CLI (cli/index.ts), so derived settings follow them.
    flags: { port: "string", host: "string", demo: "boolean", init: "boolean" },
    async run({ flags, config, deps }) {
      // One server per data directory: a second would run the same background work beside it,
      // and `migrate-to-postgres` must know nobody writes while it copies. Held until exit.
      const lock = lockDataDir(config.dataDir);
      try {
        return await serve(flags, config, await deps());
      } finally {
        lock.release();
      }
    },
  },
];

async function serve(flags: ParsedFlags, config: Config, d: Deps): Promise<CommandResult> {
  // Every index upgrade happens here, before listening, never during a request; an index
  // built by an external embedder other than the configured one fails the start.
  await maintainSearchIndex(d);
  if (d.replica) {
    if (flags.demo) throw new CliError("--demo imports the sample corpus into one node's own database; with PostgreSQL, import it on a single node and move it with `regkb migrate-to-postgres`");
    const caughtUp = await d.replica.catchUpBeforeServing();
    d.log.info("replica_caught_up", { changes: caughtUp.changes, appliedSeq: caughtUp.appliedSeq });
    await maintainSearchIndex(d);
  }
  if (flags.demo) {
    // Idempotent (content hashes): imports on the first start, a quick no-op after.
    const imported = await importSampleCorpus(d);
    d.log.info("sample_corpus", { added: imported.chunksAdded, unchanged: imported.chunksUnchanged });
    await maintainSearchIndex(d);
  }
  const demo = flags.demo ? await ensureDemo(d) : undefined;
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(d, { host: config.host, port: config.port, background: backgroundServices(d) });
  } catch (error) {
    // Nothing may keep the process alive after a failed start: a supervisor restarts it.
    d.pdf.close();
    await d.vectorSearchPool?.close();
    await closeDatabases(d);
    throw error;
  }
  // Handlers first: a supervisor may signal as soon as it reads the line below.
  const stopped = new Promise<void>((done) => {
    const shutdown = (signal: string) => {
      d.log.info("shutdown_requested", { signal });
      server.stop().then(done, done);
    };
    process.once("SIGTERM", () => shutdown("SIGTERM"));
    process.once("SIGINT", () => shutdown("SIGINT"));
  });
  if (demo) printDemo(server.url, demo);
  process.stdout.write(`regkb listening on ${server.url}\n`);
  await stopped;
  return { json: { stopped: true }, text: "regkb stopped" };
}

function printDemo(url: string, demo: { orgId: string; key: string; availablePence: number }): void {
  process.stdout.write(
    [
      "",
      `Demo organisation ${demo.orgId} — ${demo.availablePence} pence of credit.`,
      `Demo API key (new each start, shown once): ${demo.key}`,
      "",
      "Try:",
      `  curl -s ${url}/v1/search -H "Authorization: Bearer ${demo.key}" \\`,
      `       -H "Content-Type: application/json" -d '{"query":"notify the supervisory authority of a personal data breach"}'`,
      `  API reference: ${url}/v1/docs`,
      "",
    ].join("\n") + "\n",
  );
}
