// Several `regkb serve` processes on one PostgreSQL database, each with a data directory of
// its own (its search index), as an operator runs them: the schema applied by `regkb migrate`,
// the sample corpus moved in by `regkb migrate-to-postgres`, organisations and keys made by
// the CLI with the database URL. Runs from source (`bun src/main.ts`), so it tests this tree.
import { rmSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { readListeningUrl } from "./binary";
import type { TestPostgres } from "./postgres";
import { tempDir } from "./server";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const NODE_START_TIMEOUT_MS = 90_000;

export interface ClusterNode {
  readonly name: string;
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly process: Subprocess<"ignore", "pipe", "pipe">;
  /** Everything the node wrote to stderr, once it has exited. */
  readonly stderr: Promise<string>;
}

export interface ApiReply {
  status: number;
  headers: Headers;
  body: any;
}

export class Cluster {
  readonly nodes: ClusterNode[] = [];
  readonly #dirs: string[] = [];

  constructor(
    readonly url: string,
    private readonly env: Record<string, string>,
  ) {}

  /** A fresh database of `pg`'s server (dropped after the file), migrated, holding the sample corpus; call stop() after. */
  static async create(pg: TestPostgres, env: Record<string, string> = {}): Promise<Cluster> {
    const cluster = new Cluster(await pg.createDatabase(), {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/tmp",
      REGKB_LOG_LEVEL: "warn",
      ...env,
    });
    cluster.cli("migrate");
    const single = cluster.tempDir("single");
    cluster.cliOn(single, false, "corpus", "import", "--sample");
    cluster.cliOn(single, true, "migrate-to-postgres", "--from", single);
    return cluster;
  }

  tempDir(name: string): string {
    const dir = tempDir(`regkb-cluster-${name}-`);
    this.#dirs.push(dir);
    return dir;
  }

  /** `regkb …` with the database URL and --json; throws with its stderr unless it exits 0. */
  cli(...args: string[]): any {
    return this.cliOn(this.tempDir("cli"), true, ...args);
  }

  private cliOn(dataDir: string, withDatabase: boolean, ...args: string[]): any {
    const env = withDatabase ? { ...this.env, REGKB_DATABASE_URL: this.url } : this.env;
    const run = Bun.spawnSync([process.execPath, MAIN, ...args, "--data-dir", dataDir, "--json"], { env, stdout: "pipe", stderr: "pipe" });
    if (run.exitCode !== 0) throw new Error(`regkb ${args.join(" ")} exited ${run.exitCode}: ${run.stderr.toString()}`);
    return JSON.parse(run.stdout.toString().trim().split("\n").at(-1)!);
  }

  /** An organisation with every sample jurisdiction it asks for, `creditPence` of credit and an API key. */
  organisation(name: string, creditPence: number, jurisdictions = "eu,us"): { orgId: string; key: string } {
    const org = this.cli("org", "create", "--name", name, "--jurisdictions", jurisdictions);
    if (creditPence > 0) this.cli("credits", "top-up", "--org", org.id, "--amount-pence", String(creditPence), "--reference", `cluster-${name}`);
    return { orgId: org.id, key: this.cli("key", "create", "--org", org.id).key };
  }

  /** Starts a node on an empty data directory of its own; resolves once it listens. */
  async start(name: string): Promise<ClusterNode> {
    const dataDir = this.tempDir(name);
    const child = Bun.spawn([process.execPath, MAIN, "serve", "--port", "0", "--data-dir", dataDir], {
      env: { ...this.env, REGKB_DATABASE_URL: this.url },
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(child.stderr).text();
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`node ${name} did not listen within ${NODE_START_TIMEOUT_MS} ms`)), NODE_START_TIMEOUT_MS).unref(),
    );
    let url: string;
    try {
      url = await Promise.race([readListeningUrl(child.stdout), timeout]);
    } catch (error) {
      child.kill("SIGKILL");
      throw new Error(`${(error as Error).message}; stderr: ${(await stderr).slice(0, 2000)}`);
    }
    const node = { name, url, pid: child.pid, dataDir, process: child, stderr };
    this.nodes.push(node);
    return node;
  }

  async api(node: ClusterNode, key: string, path: string, body?: unknown): Promise<ApiReply> {
    const res = await fetch(`${node.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: await res.json() };
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) node.process.kill("SIGKILL");
    await Promise.all(this.nodes.map((n) => n.process.exited));
    for (const dir of this.#dirs) rmSync(dir, { recursive: true, force: true });
  }
}
