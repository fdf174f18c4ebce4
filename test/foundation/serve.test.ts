import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readListeningUrl, requireBinary, runBinary } from "../helpers/binary";
import { startFakeStripe, type FakeStripe } from "../helpers/fake-stripe";
import { startTestServer, tempDir } from "../helpers/server";

// `regkb serve` as an operator runs it: the compiled binary, its flags, a real port.
let workDir: string;
let fake: FakeStripe;

beforeAll(() => {
  requireBinary();
  workDir = tempDir("regkb-serve-");
  fake = startFakeStripe();
});
afterAll(() => {
  fake.stop();
  rmSync(workDir, { recursive: true, force: true });
});

function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

const BASE_ENV = { PATH: "/usr/bin:/bin", HOME: "/tmp", REGKB_LOG_LEVEL: "error", REGKB_SANDBOX_POOL_SIZE: "0" };

function serve(args: string[], env: Record<string, string> = {}) {
  return Bun.spawn([requireBinary(), "serve", ...args], { cwd: workDir, env: { ...BASE_ENV, ...env }, stdout: "pipe", stderr: "pipe" });
}

/** The exit code, or "still running" after `withinMs` (the process is then killed). */
async function exitWithin(proc: ReturnType<typeof serve>, withinMs: number): Promise<number | "still running"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    proc.exited,
    new Promise<"still running">((done) => (timer = setTimeout(() => done("still running"), withinMs))),
  ]);
  clearTimeout(timer);
  if (outcome === "still running") {
    proc.kill("SIGKILL");
    await proc.exited;
  }
  return outcome;
}

/** Processes whose environment names this data directory's sandbox files (the pool's children). */
function sandboxChildrenOf(dataDir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").includes(`REGKB_SANDBOX_INDEX_DIR=${dataDir}`)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

describe("serve --port", () => {
  test("the public URL follows --port: checkout return URLs and the dashboard's same-origin check use it", async () => {
    const dataDir = join(workDir, "port-flag");
    const cli = (...args: string[]) => runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: workDir });
    const org = cli("org", "create", "--name", "Port").json;
    const key = cli("key", "create", "--org", org.id).json.key;
    const port = freePort();
    const proc = serve(["--port", String(port), "--data-dir", dataDir], {
      REGKB_STRIPE_SECRET_KEY: "sk_test_regkb_port",
      REGKB_STRIPE_API_BASE: fake.url,
    });
    try {
      const url = await readListeningUrl(proc.stdout);
      expect(url).toBe(`http://127.0.0.1:${port}`);
      const topUp = await fetch(`${url}/v1/top-ups`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ amountPence: 1000 }),
      });
      expect(topUp.status).toBe(200);
      const { orderId } = (await topUp.json()) as { orderId: string };
      const session = [...fake.sessions.values()].find((s) => s.client_reference_id === orderId)!;
      expect(session.success_url).toBe(`http://127.0.0.1:${port}/top-up?order=${orderId}&outcome=success`);
      expect(session.cancel_url).toBe(`http://127.0.0.1:${port}/top-up?order=${orderId}&outcome=cancelled`);

      // Reached under another host name (a proxy that rewrites Host), a form posted from the public origin is ours.
      const host = `regkb.internal:${port}`;
      const page = await fetch(`${url}/login`, { headers: { host } });
      const cookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
      const token = /name="_login" value="([^"]+)"/.exec(await page.text())![1]!;
      const post = await fetch(`${url}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { host, cookie, origin: `http://127.0.0.1:${port}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _login: token, next: "/", email: "nobody@example.com", password: "not a password at all" }),
      });
      expect(post.status).toBe(401);
      const foreign = await fetch(`${url}/login`, {
        method: "POST",
        redirect: "manual",
        headers: { host, cookie, origin: "http://127.0.0.1:8080", "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ _login: token, next: "/", email: "nobody@example.com", password: "not a password at all" }),
      });
      expect(foreign.status).toBe(403);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  }, 60_000);
});

describe("serve on a port already taken", () => {
  test("exits non-zero at once with one clear line, having claimed no run and started no sandbox", async () => {
    const dataDir = join(workDir, "taken");
    mkdirSync(dataDir, { recursive: true });
    // Six screenings queued by an earlier server whose workers never ran.
    const earlier = await startTestServer({ dataDir, background: false });
    const org = earlier.createOrg({ balancePence: 1000 });
    for (let i = 0; i < 6; i++) {
      const created = await earlier.api("/v1/screenings", { key: org.key, body: { keywords: [`breach ${i}`] } });
      expect(created.status).toBe(202);
    }
    await earlier.stop();

    const squatter = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("someone else") });
    try {
      const proc = serve(["--port", String(squatter.port), "--data-dir", dataDir], { REGKB_SANDBOX_POOL_SIZE: "2" });
      expect(await exitWithin(proc, 30_000)).toBe(1);
      const stderr = (await new Response(proc.stderr).text()).trim().split("\n").filter((line) => !line.startsWith("{"));
      expect(stderr).toHaveLength(1);
      expect(stderr[0]).toContain(`127.0.0.1:${squatter.port}`);
      expect(stderr[0]).toMatch(/in use/);
      expect(sandboxChildrenOf(dataDir)).toEqual([]);
    } finally {
      squatter.stop(true);
    }
    const db = new Database(join(dataDir, "regkb.sqlite"), { readonly: true });
    try {
      const runs = db.query<{ status: string; attempts: number }, []>("SELECT status, attempts FROM runs").all();
      expect(runs).toEqual(Array(6).fill({ status: "pending", attempts: 0 }));
      expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM ledger_entries WHERE type IN ('settle', 'release')").get()!.n).toBe(0);
    } finally {
      db.close();
    }
    expect(existsSync(join(dataDir, "cache", "pyodide"))).toBe(false);
  }, 60_000);
});

describe("an empty or missing database beside an earlier install's files", () => {
  const cli = (dataDir: string, ...args: string[]) => runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: workDir });

  test("a zero-length database next to cache/ is refused by serve and every command, naming --init; --init starts a new one", async () => {
    const dataDir = join(workDir, "truncated");
    expect(cli(dataDir, "org", "create", "--name", "Before").exitCode).toBe(0);
    const file = join(dataDir, "regkb.sqlite");
    truncateSync(file, 0);

    const proc = serve(["--port", "0", "--data-dir", dataDir]);
    expect(await exitWithin(proc, 30_000)).toBe(1);
    const stderr = (await new Response(proc.stderr).text()).trim();
    expect(stderr.split("\n")).toHaveLength(1);
    expect(stderr).toContain("is empty");
    expect(stderr).toContain("--init");
    const list = cli(dataDir, "org", "list");
    expect(list.exitCode).toBe(1);
    expect(list.stderr).toContain("--init");
    expect(statSync(file).size).toBe(0);

    const fresh = serve(["--port", "0", "--data-dir", dataDir, "--init"]);
    try {
      const url = await readListeningUrl(fresh.stdout);
      expect(await fetch(`${url}/healthz`).then((r) => r.status)).toBe(200);
    } finally {
      fresh.kill("SIGTERM");
      expect(await fresh.exited).toBe(0);
    }
    expect(cli(dataDir, "org", "list").json.organisations).toEqual([]);
  }, 60_000);

  test("a missing database next to uploaded documents is refused; a brand-new directory is not", () => {
    const dataDir = join(workDir, "lost");
    mkdirSync(join(dataDir, "documents", "org"), { recursive: true });
    writeFileSync(join(dataDir, "documents", "org", "doc.pdf"), "%PDF-1.4\n");
    const refused = cli(dataDir, "org", "list");
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr).toContain("is missing");
    expect(refused.stderr).toContain("--init");
    expect(existsSync(join(dataDir, "regkb.sqlite"))).toBe(false);

    const brandNew = join(workDir, "brand-new");
    expect(cli(brandNew, "org", "list").exitCode).toBe(0);
    expect(statSync(join(brandNew, "regkb.sqlite")).size).toBeGreaterThan(0);
  }, 60_000);
});

describe("one process per data directory", () => {
  test("a second serve and a migrate-to-postgres are refused while a server runs; once it is SIGKILLed, a new one starts", async () => {
    const dataDir = join(workDir, "locked");
    const first = serve(["--port", String(freePort()), "--data-dir", dataDir]);
    try {
      await readListeningUrl(first.stdout);
      const second = serve(["--port", String(freePort()), "--data-dir", dataDir]);
      expect(await exitWithin(second, 30_000)).toBe(1);
      expect(await new Response(second.stderr).text()).toContain(`${dataDir} is in use by another regkb process`);
      // Refused before it connects anywhere: the URL names no server.
      const copy = runBinary(["migrate-to-postgres", "--from", dataDir, "--database-url", "postgres://nobody:secret@127.0.0.1:1/none", "--json"], { cwd: workDir, env: BASE_ENV });
      expect(copy.exitCode).toBe(1);
      expect(copy.json).toEqual({ error: "data_dir_in_use", details: expect.stringContaining(dataDir) });
    } finally {
      first.kill("SIGKILL");
      await first.exited;
    }
    // The operating system dropped the dead server's lock: nothing stale to clean up.
    const next = serve(["--port", String(freePort()), "--data-dir", dataDir]);
    try {
      expect(await readListeningUrl(next.stdout)).toStartWith("http://127.0.0.1:");
    } finally {
      next.kill("SIGTERM");
      expect(await next.exited).toBe(0);
    }
  }, 120_000);
});
