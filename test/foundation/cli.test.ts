import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { readListeningUrl, requireBinary, runBinary } from "../helpers/binary";
import { tempDir } from "../helpers/server";

// Every operator command, run through the compiled binary exactly as an operator would.
let workDir: string;
let dataDir: string;
const cli = (...args: string[]) => runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: workDir });

beforeAll(() => {
  requireBinary();
  workDir = tempDir("regkb-cli-");
  dataDir = join(workDir, "data");
});
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

describe("regkb CLI (compiled binary)", () => {
  test("--help lists every command group and --version prints the version", () => {
    const help = runBinary(["--help"], { cwd: workDir });
    expect(help.exitCode).toBe(0);
    for (const group of ["serve", "org create", "org list", "org jurisdictions", "jurisdiction add", "jurisdiction list", "key create", "key list", "key revoke", "backup"]) {
      expect(help.stdout).toContain(`regkb ${group}`);
    }
    const version = runBinary(["--version"], { cwd: workDir });
    expect(version.stdout).toMatch(/^regkb \d+\.\d+\.\d+/);
  });

  test("jurisdictions, organisations and keys round-trip with --json on the last line", () => {
    expect(cli("jurisdiction", "add", "--slug", "zz-test", "--name", "Testland", "--description", "A test jurisdiction").exitCode).toBe(0);
    const listed = cli("jurisdiction", "list");
    expect(listed.json.jurisdictions).toContainEqual({ slug: "zz-test", name: "Testland", description: "A test jurisdiction" });

    const org = cli("org", "create", "--name", "Acme Bank", "--jurisdictions", "zz-test");
    expect(org.exitCode).toBe(0);
    expect(org.json).toEqual({ id: expect.any(String), name: "Acme Bank", jurisdictions: ["zz-test"], monthlyAllowancePence: 0 });
    expect(cli("org", "list").json.organisations.map((o: { id: string }) => o.id)).toContain(org.json.id);

    cli("jurisdiction", "add", "--slug", "zz-other", "--name", "Otherland");
    const set = cli("org", "jurisdictions", "--org", org.json.id, "--set", "zz-other,zz-test");
    expect(set.json).toEqual({ id: org.json.id, jurisdictions: ["zz-other", "zz-test"] });

    const key = cli("key", "create", "--org", org.json.id, "--name", "ci");
    expect(key.json.key).toMatch(/^rk_live_[0-9A-Za-z]{40}$/);
    const keys = cli("key", "list", "--org", org.json.id);
    expect(keys.json.keys).toHaveLength(1);
    expect(JSON.stringify(keys.json)).not.toContain(key.json.key);
    const revoked = cli("key", "revoke", "--id", key.json.id);
    expect(revoked.json).toEqual({ id: key.json.id, revoked: true });
    expect(cli("key", "list", "--org", org.json.id).json.keys[0].revokedAt).toEqual(expect.any(String));
  });

  test("errors exit non-zero with a one-line reason", () => {
    const unknownJurisdiction = cli("org", "create", "--name", "X", "--jurisdictions", "nowhere");
    expect(unknownJurisdiction.exitCode).toBe(1);
    expect(unknownJurisdiction.stderr.trim().split("\n")).toHaveLength(1);
    expect(unknownJurisdiction.stderr).toContain("nowhere");
    expect(unknownJurisdiction.json.error).toBe("invalid_jurisdictions");
    expect(cli("org", "create").exitCode).toBe(1);
    expect(cli("key", "revoke", "--id", "nope").json.error).toBe("not_found");
    expect(runBinary(["org", "create", "--bogus", "1"], { cwd: workDir }).exitCode).toBe(1);
    expect(runBinary(["frobnicate"], { cwd: workDir }).exitCode).toBe(2);
  });
});

describe("the binary alone", () => {
  test("starts from an empty folder with no node_modules, answers /healthz and a search; backup while serving is consistent", async () => {
    const empty = tempDir("regkb-empty-");
    const binaryCopy = join(empty, "regkb");
    await Bun.write(binaryCopy, Bun.file(requireBinary()));
    Bun.spawnSync(["chmod", "+x", binaryCopy]);
    const serverData = join(empty, "data");
    const proc = Bun.spawn([binaryCopy, "serve", "--port", "0", "--data-dir", serverData], {
      cwd: empty,
      // A long grace period: an idle server must exit at once on SIGTERM, not wait it out.
      env: { PATH: "/usr/bin:/bin", REGKB_LOG_LEVEL: "warn", REGKB_SHUTDOWN_TIMEOUT_MS: "600000" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const url = await readListeningUrl(proc.stdout);
      const health = await fetch(`${url}/healthz`).then((r) => r.json());
      expect(health).toEqual({ status: "ok", version: expect.any(String), database: "ok", storage: "ok" });

      // A search runs its vector half on a worker thread, whose entry point is inside the binary too.
      const run = (...args: string[]) => runBinary([...args, "--data-dir", serverData, "--json"], { cwd: empty });
      expect(run("corpus", "import", "--sample").exitCode).toBe(0);
      const org = run("org", "create", "--name", "Searcher", "--jurisdictions", "eu").json;
      run("credits", "top-up", "--org", org.id, "--amount-pence", "100");
      const key = run("key", "create", "--org", org.id).json.key;
      const search = await fetch(`${url}/v1/search`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ query: "notify the supervisory authority of a personal data breach" }),
      }).then((r) => r.json());
      expect(search.results.map((r: { citationPath: string }) => r.citationPath)).toContainEqual(expect.stringMatching(/^GDPR > Article 33/));

      // Writes keep arriving from the CLI while the backup runs; the copy is one consistent snapshot.
      run("jurisdiction", "add", "--slug", "bk", "--name", "Backup");
      const writer = (async () => {
        for (let i = 0; i < 8; i++) {
          run("org", "create", "--name", `Org ${i}`, "--jurisdictions", "bk");
          await fetch(`${url}/healthz`);
        }
      })();
      await Bun.sleep(50);
      const backupFile = join(empty, "backup.sqlite");
      const backup = run("backup", "--to", backupFile);
      await writer;
      expect(backup.exitCode).toBe(0);
      expect(backup.json.path).toBe(backupFile);
      const copy = new Database(backupFile, { readonly: true });
      const orgs = copy.query<{ n: number }, []>("SELECT count(*) AS n FROM organisations").get()!.n;
      const links = copy.query<{ n: number }, []>("SELECT count(*) AS n FROM organisation_jurisdictions").get()!.n;
      expect(copy.query<{ integrity_check: string }, []>("PRAGMA integrity_check").get()!.integrity_check).toBe("ok");
      expect(links).toBe(orgs); // each organisation and its jurisdiction were written in one transaction
      copy.close();
      expect(run("backup", "--to", backupFile).exitCode).toBe(1); // never overwrites
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      rmSync(empty, { recursive: true, force: true });
    }
    // Warnings go to stderr: a search worker that failed to start would say so there.
    expect(await new Response(proc.stderr).text()).not.toContain("search_worker_failed");
  });
});

describe("the binary's HTTP edge", () => {
  test("oversized request headers get the JSON 431 (Bun's own limit is raised above the server's)", async () => {
    const dir = tempDir("regkb-headers-");
    const proc = Bun.spawn([requireBinary(), "serve", "--port", "0", "--data-dir", join(dir, "data")], {
      cwd: dir,
      env: { PATH: "/usr/bin:/bin", REGKB_LOG_LEVEL: "warn" },
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const url = await readListeningUrl(proc.stdout);
      for (const headers of [{ "x-big": "a".repeat(20_000) }, Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`x-h${i}`, "v".repeat(400)]))]) {
        const res = await fetch(`${url}/v1/credits`, { headers });
        expect(res.status).toBe(431);
        expect(res.headers.get("x-request-id")).toBeTruthy();
        expect(await res.json()).toEqual({ error: "request_headers_too_large", details: expect.stringMatching(/^request headers are \d+ bytes; the limit is 16384 bytes$/) });
      }
      const fine = await fetch(`${url}/v1/credits`, { headers: { "x-big": "a".repeat(15_000) } });
      expect(fine.status).toBe(401);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

