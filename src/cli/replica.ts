import { openPostgres, redactDatabaseUrl } from "../db/postgres/connect";
import { maintainSearchIndex, type MaintenanceReport } from "../search/maintenance";
import { ReplicaFollower, type CatchUpReport, type ReplicaLag } from "../search/replica/follower";
import { CliError } from "./args";
import type { Command } from "./command";

export const replicaCommands: Command[] = [
  {
    name: "replica sync",
    summary:
      "Build or update this node's search index from PostgreSQL's passages (their stored vectors, never re-embedded); --follow keeps applying changes until SIGTERM",
    usage: "regkb replica sync --database-url URL [--follow]",
    flags: { follow: "boolean" },
    async run({ flags, config, deps }) {
      if (config.databaseUrl === undefined) throw new CliError("--database-url (or REGKB_DATABASE_URL) is required: the PostgreSQL database whose passages this node replicates");
      const where = redactDatabaseUrl(config.databaseUrl);
      const d = await deps();
      // One connection for reads, one for LISTEN (Bun opens it for sql.listen).
      const sql = openPostgres({ url: config.databaseUrl, poolSize: 1 });
      try {
        const follower = new ReplicaFollower(sql, d.searchIndex, { batchChangesMax: config.replicaBatchChanges });
        const started = performance.now();
        const { report, maintenance } = await withSource(where, async () => {
          await follower.check();
          // Before: an empty index adopts the embedder; after: a corpus that grew is clustered, as `regkb corpus import` does.
          const before = await maintainSearchIndex(d);
          const caughtUp = await follower.catchUp();
          return { report: caughtUp, maintenance: { ...before, ...(await maintainSearchIndex(d)) } };
        });
        const seconds = Math.round(performance.now() - started) / 1000;
        const lag = await withSource(where, () => follower.lag());
        const line = `caught up with PostgreSQL at ${where} in ${seconds} s: ${describePass(report)}; ${describeLag(lag)}${describeMaintenance(maintenance)}`;
        if (flags.follow !== true) return { json: { ...report, lag, maintenance, seconds }, text: line };
        process.stdout.write(`${line}\n`);
        const totals = await followUntilStopped(follower, config.replicaPollMs, async () => void (await maintainSearchIndex(d)));
        return { json: { ...report, followed: totals, lag: await follower.lag(), maintenance }, text: `stopped following: ${describePass(totals)}` };
      } finally {
        await sql.close();
      }
    },
  },
];

async function withSource<T>(where: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new Error(`PostgreSQL at ${where}: ${(error as Error).message}`);
  }
}

async function followUntilStopped(follower: ReplicaFollower, pollMs: number, maintain: () => Promise<void>): Promise<CatchUpReport> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  const totals: CatchUpReport = { changes: 0, batches: 0, written: 0, unchanged: 0, removed: 0, appliedSeq: follower.appliedSeq() };
  try {
    await follower.follow({
      pollMs,
      signal: controller.signal,
      afterChanges: maintain,
      onPass: (report, lag) => {
        if (report.changes === 0) return;
        totals.changes += report.changes;
        totals.batches += report.batches;
        totals.written += report.written;
        totals.unchanged += report.unchanged;
        totals.removed += report.removed;
        totals.appliedSeq = report.appliedSeq;
        process.stdout.write(`applied ${describePass(report)}; ${describeLag(lag)}\n`);
      },
      onError: (error) => process.stderr.write(`regkb replica sync: ${error.message.split("\n")[0]}; retrying in ${pollMs} ms\n`),
    });
  } finally {
    process.off("SIGTERM", stop);
    process.off("SIGINT", stop);
  }
  return totals;
}

function describePass(r: CatchUpReport): string {
  return `${r.changes} changes up to seq ${r.appliedSeq} (${r.written} passages indexed, ${r.unchanged} unchanged, ${r.removed} removed)`;
}

function describeLag(lag: ReplicaLag): string {
  return `lag ${lag.seqLag} changes, ${lag.behindMs} ms`;
}

function describeMaintenance(m: MaintenanceReport): string {
  return m.clustered === undefined ? "" : `; clustered ${m.clustered.vectors} vectors into ${m.clustered.clusters} clusters`;
}
