/**
 * Scale-out benchmark: regkb nodes serving from one PostgreSQL database. Prints figures;
 * asserts nothing but that every request was answered and the ledgers verify.
 *
 *   bun scripts/bench/cluster.ts [--nodes 1,2,3] [--clients-per-node 4] [--seconds 20]
 *                                [--warm-up-seconds 10] [--processes 1,2,3] [--ledger-seconds 10]
 *                                [--skip-search] [--skip-ledger]
 *
 * 1. Paid searches (POST /v1/search, 2p each) with 1, 2 and 3 nodes (`dist/regkb serve
 *    --database-url`, each over its own empty data directory, so each builds its search
 *    replica from PostgreSQL), set up as an operator would (migrate, `corpus import --sample`
 *    into a single-node install, `migrate-to-postgres`); `--clients-per-node` clients per
 *    node, in this process, each sending the judged questions one after another to the nodes
 *    in turn (round robin) for `--seconds` after `--warm-up-seconds`. Then one node on the
 *    single-node install's own SQLite. Per configuration: paid searches/s, latency, and the
 *    CPU each paid search cost in the node processes, in PostgreSQL's backends of the
 *    benchmark's database, in PostgreSQL's shared processes (postmaster, WAL writer,
 *    checkpointer…: they also serve other databases of the server), in the clients (this
 *    process), and how busy the whole machine was (Linux /proc; other work included).
 * 2. ledger.charge() per second straight through the synchronous PostgreSQL handle and
 *    through bun:sqlite (synchronous=FULL, one database file), with 1, 2 and 3 processes at
 *    once, all charging one organisation or each its own.
 *
 * Nodes run the compiled binary (build it first: bun scripts/build.ts) with
 * REGKB_SANDBOX_POOL_SIZE=0 (no execution children), REGKB_PDF_PARSERS_WARM=0 and
 * REGKB_LOG_LEVEL=warn; everything else at its default. Uses REGKB_TEST_DATABASE_URL
 * (default: scripts/dev-postgres.sh's server) and creates and drops a database of its own.
 */
import { cpSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { SQL } from "bun";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { openDatabase } from "../../src/db/open";
import { openPostgres } from "../../src/db/postgres/connect";
import { migratePostgres } from "../../src/db/postgres/migrate";
import { openPostgresHandle } from "../../src/db/postgres/sync/handle";
import type { SqlDatabase } from "../../src/db/sql-database";
import { readListeningUrl, requireBinary, runBinary, type CliRun } from "../../test/helpers/binary";
import { linesOf, type NodeProcess } from "../../test/helpers/node-processes";
import { testServerUrl } from "../../test/helpers/postgres";
import { tempDir } from "../../test/helpers/server";
import sampleJurisdictions from "../../data/corpus/jurisdictions.json";
import { CHARGE_PENCE, chargeRepeatedly, fundedOrganisation } from "./charges";
import { p50p95, QUERIES } from "./corpus";

const { values: args } = parseArgs({
  options: {
    nodes: { type: "string", default: "1,2,3" },
    "clients-per-node": { type: "string", default: "4" },
    seconds: { type: "string", default: "20" },
    "warm-up-seconds": { type: "string", default: "10" },
    processes: { type: "string", default: "1,2,3" },
    "ledger-seconds": { type: "string", default: "10" },
    "skip-search": { type: "boolean", default: false },
    "skip-ledger": { type: "boolean", default: false },
    // Internal: a ledger child process (part 2).
    charger: { type: "string" },
    target: { type: "string" },
    org: { type: "string" },
  },
});

const bounded = (name: string, value: string | undefined, min: number, max: number): number => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
};
const list = (name: string, value: string, max: number): number[] => value.split(",").map((v) => bounded(name, v, 1, max));

const NODES = list("nodes", args.nodes!, 8);
const CLIENTS_PER_NODE = bounded("clients-per-node", args["clients-per-node"], 1, 64);
const SECONDS = bounded("seconds", args.seconds, 1, 600);
const WARM_UP_SECONDS = bounded("warm-up-seconds", args["warm-up-seconds"], 0, 600);
const PROCESSES = list("processes", args.processes!, 8);
const LEDGER_SECONDS = bounded("ledger-seconds", args["ledger-seconds"], 1, 600);
/** Linux clock ticks are 10 ms (USER_HZ 100). */
const TICK_MS = 10;
const INDEX_BEHIND_HEADER = "regkb-index-behind-ms";
const NODE_ENV = { REGKB_SANDBOX_POOL_SIZE: "0", REGKB_PDF_PARSERS_WARM: "0", REGKB_LOG_LEVEL: "warn" };

function load(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
}

/** utime + stime (+ their reaped children's with `children`) of a process, in ms; undefined once it is gone. */
function processCpuMs(pid: number, children = false): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ").map(Number);
  return (fields[11]! + fields[12]! + (children ? fields[13]! + fields[14]! : 0)) * TICK_MS;
}

/** CPU ms of every core since boot, busy and in all (/proc/stat's first line). */
function machineCpuMs(): { busy: number; all: number } {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  const n = ticks.map(Number);
  const all = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (all - n[3]! - n[4]!) * TICK_MS, all: all * TICK_MS };
}

// --- Part 1: paid searches over HTTP --------------------------------------------------------

interface Node {
  proc: Bun.Subprocess<"ignore", "pipe", "inherit">;
  url: string;
}

function cli(cliArgs: string[], env: Record<string, string> = {}): CliRun {
  const run = runBinary(cliArgs, { env: { ...NODE_ENV, ...env } });
  // stderr never holds the URL's password: the binary redacts it.
  if (run.exitCode !== 0) throw new Error(`regkb ${cliArgs.slice(0, 2).join(" ")} exited ${run.exitCode}: ${run.stderr}`);
  return run;
}

async function startNode(dataDir: string, databaseUrl: string | undefined): Promise<Node> {
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...NODE_ENV, ...(databaseUrl ? { REGKB_DATABASE_URL: databaseUrl } : {}) };
  const proc = Bun.spawn([requireBinary(), "serve", "--port", "0", "--host", "127.0.0.1", "--data-dir", dataDir], { env, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  return { proc, url: await readListeningUrl(proc.stdout) };
}

async function stopNode(node: Node): Promise<void> {
  node.proc.kill("SIGTERM");
  await node.proc.exited;
}

/** PostgreSQL's processes: the backends of `database`, and the server's shared ones (postmaster and background processes). */
async function postgresPids(admin: SQL, database: string): Promise<{ backends: number[]; shared: number[] }> {
  const rows: { pid: number; datname: string | null; backend_type: string }[] = await admin.unsafe("SELECT pid, datname, backend_type FROM pg_stat_activity");
  const backends = rows.filter((r) => r.datname === database && r.backend_type === "client backend").map((r) => r.pid);
  const shared = rows.filter((r) => r.datname === null).map((r) => r.pid);
  const [{ pid }] = (await admin.unsafe("SELECT pg_backend_pid() AS pid")) as [{ pid: number }];
  const ppid = Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);
  return { backends, shared: [...shared, ppid] };
}

interface CpuSnapshot {
  nodes: Map<number, number>;
  backends: Map<number, number>;
  shared: Map<number, number>;
  clients: number;
  machine: { busy: number; all: number };
}

async function snapshot(nodes: Node[], admin: SQL | undefined, database: string | undefined): Promise<CpuSnapshot> {
  const pids = admin && database ? await postgresPids(admin, database) : { backends: [], shared: [] };
  const read = (list: number[], children = false): Map<number, number> => {
    const byPid = new Map<number, number>();
    for (const pid of list) {
      const ms = processCpuMs(pid, children);
      if (ms !== undefined) byPid.set(pid, ms);
    }
    return byPid;
  };
  const usage = process.cpuUsage();
  return {
    // A node's children (PDF parsers, none here) count as the node's.
    nodes: read(nodes.map((n) => n.proc.pid), true),
    backends: read(pids.backends),
    // The postmaster's own time only: its reaped children are every database's ended sessions.
    shared: read(pids.shared),
    clients: (usage.user + usage.system) / 1000,
    machine: machineCpuMs(),
  };
}

/** CPU ms between two snapshots, summed over processes: one gone by the end counts nothing (the nodes' connections live throughout). */
function spent(before: Map<number, number>, after: Map<number, number>): number {
  let ms = 0;
  for (const [pid, end] of after) ms += end - (before.get(pid) ?? 0);
  return ms;
}

interface Round {
  latenciesMs: number[];
  seconds: number;
  indexBehindMsMax: number;
}

/** `clients` loops of POST /v1/search for `seconds`, each request to the next node in turn. */
async function searchRound(nodes: Node[], apiKey: string, clients: number, seconds: number): Promise<Round> {
  const latenciesMs: number[] = [];
  let indexBehindMsMax = 0;
  const started = performance.now();
  const endAt = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < endAt; i++) {
        const node = nodes[(c + i) % nodes.length]!;
        const sent = performance.now();
        const res = await fetch(`${node.url}/v1/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ query: QUERIES[(c * 37 + i) % QUERIES.length], topK: 10 }),
        });
        if (res.status !== 200) throw new Error(`search on ${node.url} returned ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
        latenciesMs.push(performance.now() - sent);
        indexBehindMsMax = Math.max(indexBehindMsMax, Number(res.headers.get(INDEX_BEHIND_HEADER) ?? 0));
      }
    }),
  );
  return { latenciesMs, seconds: (performance.now() - started) / 1000, indexBehindMsMax };
}

/** Warm-up, then the measured round with its CPU; prints one configuration's figures and returns its paid searches (warm-up included). */
async function measureSearches(label: string, nodes: Node[], apiKey: string, pg?: { admin: SQL; database: string }): Promise<number> {
  const clients = CLIENTS_PER_NODE * nodes.length;
  const warm = WARM_UP_SECONDS > 0 ? await searchRound(nodes, apiKey, clients, WARM_UP_SECONDS) : { latenciesMs: [] };
  const loadBefore = load();
  const before = await snapshot(nodes, pg?.admin, pg?.database);
  const round = await searchRound(nodes, apiKey, clients, SECONDS);
  const after = await snapshot(nodes, pg?.admin, pg?.database);
  const n = round.latenciesMs.length;
  const perSearch = (ms: number) => (ms / n).toFixed(2);
  const nodesMs = spent(before.nodes, after.nodes);
  const backendsMs = spent(before.backends, after.backends);
  const sharedMs = spent(before.shared, after.shared);
  const clientsMs = after.clients - before.clients;
  const machineBusyMs = after.machine.busy - before.machine.busy;
  const cores = (after.machine.all - before.machine.all) / (round.seconds * 1000);
  console.log(
    `${label}, ${clients} clients, ${round.seconds.toFixed(1)} s: ${(n / round.seconds).toFixed(0)} paid searches/s, latency ${p50p95(round.latenciesMs)} ms (p50 / p95)` +
      (pg ? `, ${INDEX_BEHIND_HEADER} max ${round.indexBehindMsMax}` : ""),
  );
  console.log(
    `  CPU ms per paid search: nodes ${perSearch(nodesMs)}` +
      (pg ? `, PostgreSQL backends ${perSearch(backendsMs)}, PostgreSQL shared processes ${perSearch(sharedMs)}` : "") +
      `, clients ${perSearch(clientsMs)}; whole machine ${perSearch(machineBusyMs)} (${(machineBusyMs / (round.seconds * 1000)).toFixed(2)} of ${cores.toFixed(0)} cores busy, other work included); load average ${loadBefore} → ${load()}`,
  );
  return warm.latenciesMs.length + n;
}

function checkLedger(label: string, env: Record<string, string>, cliArgs: string[], orgId: string, fundsPence: number, paidSearches: number): void {
  const shown = cli(["credits", "show", "--org", orgId, "--json", ...cliArgs], env).json as { availablePence: number };
  const verified = cli(["credits", "verify", "--json", ...cliArgs], env);
  const chargedPence = fundsPence - shown.availablePence;
  console.log(`${label}: ${paidSearches} paid searches answered, ${chargedPence}p charged (${chargedPence / CHARGE_PENCE} charges); credits verify exit ${verified.exitCode}`);
  if (chargedPence !== paidSearches * CHARGE_PENCE) throw new Error(`${label}: charged ${chargedPence}p for ${paidSearches} paid searches`);
}

async function benchSearches(server: string, database: string, url: string): Promise<void> {
  const root = tempDir("regkb-bench-cluster-");
  const single = join(root, "single");
  // Commands on PostgreSQL still take a data directory (left empty).
  const pgEnv = { REGKB_DATABASE_URL: url, REGKB_DATA_DIR: join(root, "cli") };
  const admin = openPostgres({ url: server, poolSize: 1 });
  const nodes: Node[] = [];
  try {
    cli(["migrate"], pgEnv);
    cli(["corpus", "import", "--sample", "--data-dir", single]);
    // The organisation, its credit and key are made on the single-node install and copied with it, so both engines serve the same key.
    const slugs = sampleJurisdictions.map((j) => j.slug).join(",");
    const org = cli(["org", "create", "--name", "Bench", "--jurisdictions", slugs, "--json", "--data-dir", single]).json as { id: string };
    const fundsPence = 100_000_000;
    cli(["credits", "top-up", "--org", org.id, "--amount-pence", String(fundsPence), "--reference", "bench", "--data-dir", single]);
    const apiKey = (cli(["key", "create", "--org", org.id, "--json", "--data-dir", single]).json as { key: string }).key;
    const copyStarted = performance.now();
    cli(["migrate-to-postgres", "--from", single], pgEnv);
    console.log(`sample corpus installed and copied to PostgreSQL (migrate-to-postgres ${((performance.now() - copyStarted) / 1000).toFixed(1)} s); load average ${load()}`);
    let paidOnPostgres = 0;
    for (const count of NODES) {
      while (nodes.length < count) {
        const started = performance.now();
        nodes.push(await startNode(join(root, `node${nodes.length + 1}`), url));
        console.log(`node ${nodes.length} listening (replica caught up) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      }
      paidOnPostgres += await measureSearches(`PostgreSQL, ${count} node${count === 1 ? "" : "s"}`, nodes.slice(0, count), apiKey, { admin, database });
    }
    for (const node of nodes.splice(0)) await stopNode(node);
    checkLedger("PostgreSQL", pgEnv, [], org.id, fundsPence, paidOnPostgres);
    // The SQLite node serves a copy, so the single-node install stays as it was copied.
    const sqliteDir = join(root, "sqlite");
    cpSync(single, sqliteDir, { recursive: true });
    nodes.push(await startNode(sqliteDir, undefined));
    const paidOnSqlite = await measureSearches("SQLite, 1 node", nodes, apiKey);
    await stopNode(nodes.pop()!);
    checkLedger("SQLite", {}, ["--data-dir", sqliteDir], org.id, fundsPence, paidOnSqlite);
  } finally {
    for (const node of nodes) await stopNode(node);
    await admin.close();
    rmSync(root, { recursive: true, force: true });
  }
}

// --- Part 2: ledger.charge() from several processes -----------------------------------------

async function nextLine(charger: NodeProcess): Promise<string> {
  const next = await charger.lines.next();
  if (next.done) throw new Error(`ledger child exited with status ${await charger.proc.exited}`);
  return next.value;
}

/** A ledger child: opens its own handle (or SQLite connection), says `ready`, waits for `go`, charges for LEDGER_SECONDS, prints the count. */
async function runCharger(engine: string, target: string, orgId: string): Promise<void> {
  const db: SqlDatabase = engine === "postgres" ? openPostgresHandle({ url: target }) : await openDatabase(target, "full");
  process.stdout.write("ready\n");
  for await (const line of console) if (line === "go") break;
  const started = performance.now();
  const made = chargeRepeatedly(db, orgId, `${process.pid}`, { count: Number.MAX_SAFE_INTEGER, untilMs: started + LEDGER_SECONDS * 1000 });
  process.stdout.write(`${JSON.stringify({ charges: made, seconds: (performance.now() - started) / 1000 })}\n`);
  db.close();
}

async function chargeTogether(engine: "postgres" | "sqlite", target: string, db: SqlDatabase, processes: number, sharedOrg: boolean): Promise<void> {
  const orgIds = Array.from({ length: sharedOrg ? 1 : processes }, (_, i) => fundedOrganisation(db, `bench ${i}`));
  const before = orgIds.map((orgId) => getBalance(db, orgId).availablePence);
  const chargers: NodeProcess[] = Array.from({ length: processes }, (_, i) => {
    const childArgs = ["--charger", engine, "--target", target, "--org", orgIds[i % orgIds.length]!, "--ledger-seconds", String(LEDGER_SECONDS)];
    const proc = Bun.spawn([process.execPath, import.meta.path, ...childArgs], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
    return { proc, lines: linesOf(proc.stdout)[Symbol.asyncIterator]() };
  });
  for (const charger of chargers) if ((await nextLine(charger)) !== "ready") throw new Error("ledger child did not say ready");
  const loadBefore = load();
  for (const charger of chargers) {
    charger.proc.stdin.write("go\n");
    charger.proc.stdin.flush();
  }
  const results = await Promise.all(chargers.map(async (c) => JSON.parse(await nextLine(c)) as { charges: number; seconds: number }));
  for (const charger of chargers) {
    charger.proc.stdin.end();
    await charger.proc.exited;
  }
  const charges = results.reduce((sum, r) => sum + r.charges, 0);
  const seconds = Math.max(...results.map((r) => r.seconds));
  const chargedPence = orgIds.reduce((sum, orgId, i) => sum + before[i]! - getBalance(db, orgId).availablePence, 0);
  const verified = verifyLedger(db).ok;
  const engineLabel = engine === "postgres" ? "PostgreSQL through the handle" : "SQLite (synchronous=FULL)";
  console.log(
    `ledger.charge on ${engineLabel}, ${processes} process${processes === 1 ? "" : "es"}, ${sharedOrg ? "one organisation" : "an organisation each"}: ` +
      `${(charges / seconds).toFixed(0)} charges/s (charges by process: ${results.map((r) => r.charges).join(" + ")}; ${((seconds * 1000 * processes) / charges).toFixed(2)} ms each per process); ` +
      `${chargedPence}p charged for ${charges} charges, verify ${verified ? "ok" : "FAILED"}; load average ${loadBefore} → ${load()}`,
  );
  if (chargedPence !== charges * CHARGE_PENCE || !verified) throw new Error(`${engineLabel}: the ledger does not match the charges made`);
}

async function benchLedger(url: string): Promise<void> {
  // Already done by part 1 unless it was skipped.
  const sql = openPostgres({ url, poolSize: 1 });
  await migratePostgres(sql);
  await sql.close();
  const dataDir = tempDir("regkb-bench-cluster-ledger-");
  const handle = openPostgresHandle({ url });
  const sqlite = await openDatabase(dataDir, "full");
  try {
    for (const [engine, target, db] of [["postgres", url, handle], ["sqlite", dataDir, sqlite]] as const) {
      for (const processes of PROCESSES) {
        for (const sharedOrg of processes === 1 ? [true] : [true, false]) await chargeTogether(engine, target, db, processes, sharedOrg);
      }
    }
  } finally {
    handle.close();
    sqlite.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// --- Main -----------------------------------------------------------------------------------

async function main(): Promise<void> {
  const server = testServerUrl();
  const admin = openPostgres({ url: server, poolSize: 1 });
  const database = `regkb_bench_${crypto.randomUUID().replaceAll("-", "")}`;
  await admin.unsafe(`CREATE DATABASE "${database}"`);
  const url = Object.assign(new URL(server), { pathname: `/${database}` }).toString();
  const [{ server_version }] = (await admin.unsafe("SHOW server_version")) as [{ server_version: string }];
  console.log(`machine: ${availableParallelism()} cores; PostgreSQL ${server_version} on ${new URL(server).host}; load average ${load()}`);
  try {
    if (!args["skip-search"]) await benchSearches(server, database, url);
    if (!args["skip-ledger"]) await benchLedger(url);
  } finally {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.close();
  }
}

if (args.charger) await runCharger(args.charger, args.target!, args.org!);
else await main();
