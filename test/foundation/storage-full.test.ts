import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { closeSync, openSync, readdirSync, rmSync, statfsSync, writeSync } from "node:fs";
import { join } from "node:path";
import { createApiKey, createOrganisation } from "../../src/auth/service";
import { upsertJurisdiction } from "../../src/auth/store";
import { backgroundServices } from "../../src/background";
import { getBalance, verifyLedger } from "../../src/billing/ledger";
import { recordOperatorTopUp } from "../../src/billing/operator";
import { loadConfig } from "../../src/config";
import { createDeps } from "../../src/deps";
import { createLogger } from "../../src/log";
import { maintainSearchIndex } from "../../src/search/maintenance";
import { startServer } from "../../src/server";
import { readListeningUrl, requireBinary, runBinary } from "../helpers/binary";
import { tempDir } from "../helpers/server";
import { policyPdf } from "../fixtures/pdf/writer";

const SEARCH = { query: "notify the supervisory authority of a personal data breach", topK: 3 };

/** Fills the file system under `dir` to the last byte (tmpfs allocates whole pages, so nothing else fits after). */
function fill(dir: string): string {
  const filler = join(dir, "filler");
  const chunk = new Uint8Array(1024 * 1024);
  let size = chunk.byteLength;
  const fd = openSync(filler, "w");
  try {
    for (;;) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOSPC") throw error;
        if (size === 1) break;
        size = Math.max(1, Math.floor(size / 2));
      }
    }
  } finally {
    closeSync(fd);
  }
  return filler;
}

describe("a full disk under a running server (tmpfs, compiled binary)", () => {
  let mountPoint: string;

  beforeAll(() => {
    requireBinary();
    // Mounting needs root, as on this project's machines and in CI: failing loudly beats skipping.
    if (process.getuid?.() !== 0) throw new Error("this test mounts a small tmpfs and must run as root");
    mountPoint = tempDir("regkb-full-");
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mountPoint], { stderr: "pipe" });
    if (mounted.exitCode !== 0) throw new Error(`mount failed: ${mounted.stderr.toString()}`);
  });
  afterAll(() => {
    Bun.spawnSync(["umount", mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  test("503 storage_full with Retry-After, nothing charged or stored, one log line, said on /healthz; all well once space is freed", async () => {
    const dataDir = join(mountPoint, "data");
    const cli = (...args: string[]) => runBinary([...args, "--data-dir", dataDir, "--json"], { cwd: mountPoint });
    expect(cli("jurisdiction", "add", "--slug", "eu", "--name", "European Union").exitCode).toBe(0);
    const org = cli("org", "create", "--name", "Full", "--jurisdictions", "eu").json;
    expect(cli("credits", "top-up", "--org", org.id, "--amount-pence", "1000").exitCode).toBe(0);
    const key = cli("key", "create", "--org", org.id).json.key as string;

    const proc = Bun.spawn([requireBinary(), "serve", "--port", "0", "--data-dir", dataDir], {
      cwd: mountPoint,
      env: { PATH: "/usr/bin:/bin", HOME: "/tmp", REGKB_LOG_LEVEL: "warn", REGKB_SANDBOX_POOL_SIZE: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    let filler: string | undefined;
    let stderr = "";
    try {
      const url = await readListeningUrl(proc.stdout);
      const search = () =>
        fetch(`${url}/v1/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(SEARCH),
        });
      expect((await search()).status).toBe(200);
      expect((await (await fetch(`${url}/healthz`)).json()) as object).toMatchObject({ status: "ok", storage: "ok" });

      // Empty the write-ahead log so the next commit needs new blocks, then take every block there is.
      const operator = new Database(join(dataDir, "regkb.sqlite"));
      operator.exec("PRAGMA busy_timeout = 10000");
      operator.query("PRAGMA wal_checkpoint(TRUNCATE)").get();
      operator.close();
      filler = fill(mountPoint);
      expect(statfsSync(mountPoint).bavail).toBe(0);

      const burst = await Promise.all(Array.from({ length: 200 }, () => search()));
      for (const response of burst) {
        expect(response.status).toBe(503);
        expect(Number(response.headers.get("retry-after"))).toBeGreaterThan(0);
        const body = (await response.json()) as { error: string; details: string };
        expect(body.error).toBe("storage_full");
        expect(body.details).toContain("nothing was charged");
      }
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(503);
      expect((await health.json()) as object).toMatchObject({ status: "degraded", database: "ok", storage: "full" });

      // An upload fails writing its file: refused the same way, charged nothing, no file left behind.
      const form = new FormData();
      form.append("file", new File([policyPdf(2) as Uint8Array<ArrayBuffer>], "policy.pdf", { type: "application/pdf" }));
      const upload = await fetch(`${url}/v1/documents`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
      expect(upload.status).toBe(503);
      expect(((await upload.json()) as { error: string }).error).toBe("storage_full");
      expect(readdirSync(join(dataDir, "documents", org.id), { recursive: true }).filter((f) => String(f).endsWith(".pdf"))).toEqual([]);

      const credits = await fetch(`${url}/v1/credits`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await credits.json()) as { balancePence: number }).balancePence).toBe(998);

      rmSync(filler);
      filler = undefined;
      expect((await (await fetch(`${url}/healthz`)).json()) as object).toMatchObject({ status: "ok", storage: "ok" });
      const after = await search();
      expect(after.status).toBe(200);
      expect(((await after.json()) as { availablePence: number }).availablePence).toBe(996);
    } finally {
      if (filler) rmSync(filler, { force: true });
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      stderr = await new Response(proc.stderr).text();
    }
    const lines = stderr.trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as { event: string });
    // 201 refused requests within a minute: one line says so; nothing is reported as an internal error.
    expect(lines.filter((l) => l.event === "storage_full")).toHaveLength(1);
    expect(lines.filter((l) => l.event === "internal_error")).toEqual([]);
    const verify = cli("credits", "verify");
    expect(verify.exitCode).toBe(0);
    expect(verify.json.ok).toBe(true);
  }, 120_000);
});

describe("SQLITE_FULL from the database's own size limit (no mount needed)", () => {
  test("maps to 503 storage_full with Retry-After, logs once per interval, rolls the charge back", async () => {
    const dataDir = tempDir("regkb-page-limit-");
    const lines: { event: string; suppressedSinceLastLine?: number }[] = [];
    const config = loadConfig({ REGKB_SANDBOX_POOL_SIZE: "0", REGKB_SEARCH_WORKERS: "0" }, { dataDir, port: 0, host: "127.0.0.1" });
    const deps = await createDeps(config, { log: createLogger("warn", (line) => lines.push(JSON.parse(line))) });
    const server = await startServer(deps, { host: "127.0.0.1", port: 0, background: backgroundServices(deps) });
    try {
      // As `regkb serve` does before listening: a search then writes nothing but its charge.
      await maintainSearchIndex(deps);
      upsertJurisdiction(deps.db, { slug: "eu", name: "European Union", description: "EU regulations" });
      const org = createOrganisation(deps, { name: "Capped", jurisdictions: ["eu"] });
      recordOperatorTopUp(deps, { orgId: org.id, amountPence: 100_000, reference: "test" });
      const key = createApiKey(deps, { orgId: org.id }).key;
      const search = () =>
        fetch(`${server.url}/v1/search`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: JSON.stringify(SEARCH),
        });
      // The file may not grow by a single page from now on.
      const pages = deps.db.query<{ page_count: number }, []>("PRAGMA page_count").get()!.page_count;
      deps.db.exec(`PRAGMA max_page_count = ${pages}`);
      let succeeded = 0;
      let first503: Response | undefined;
      for (let i = 0; i < 5_000 && !first503; i++) {
        const response = await search();
        if (response.status === 200) succeeded++;
        else first503 = response;
      }
      expect(first503?.status).toBe(503);
      expect(first503!.headers.get("retry-after")).toBe("60");
      expect(((await first503!.json()) as { error: string }).error).toBe("storage_full");
      for (let i = 0; i < 50; i++) expect((await search()).status).toBe(503);
      expect(getBalance(deps.db, org.id).balancePence).toBe(100_000 - 2 * succeeded);
      expect(lines.filter((l) => l.event === "storage_full")).toHaveLength(1);
      expect(lines.filter((l) => l.event === "internal_error")).toEqual([]);

      deps.db.exec("PRAGMA max_page_count = 1073741823");
      expect((await search()).status).toBe(200);
      expect(verifyLedger(deps.db).ok).toBe(true);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

