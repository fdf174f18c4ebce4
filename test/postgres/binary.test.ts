// The compiled binary against a real PostgreSQL: `regkb migrate` prepares the schema (two at
// once apply each version once) without ever printing the password, and the commands that
// cannot use PostgreSQL yet refuse a database URL instead of quietly using SQLite.
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresMigrations } from "../../src/db/postgres/migrations";
import { requireBinary, runBinary } from "../helpers/binary";
import { usePostgres } from "../helpers/postgres";

const pg = usePostgres();
const ALL = postgresMigrations.map((m) => m.version);
const NEWEST = ALL.at(-1)!;

async function migrate(url: string): Promise<{ exitCode: number; stdout: string; stderr: string }> {
  const proc = Bun.spawn([requireBinary(), "migrate", "--database-url", url, "--json"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { exitCode, stdout, stderr };
}

test("regkb migrate: two processes at once apply every version once between them; a third applies nothing", async () => {
  const password = decodeURIComponent(new URL(pg.url).password);
  const runs = await Promise.all([migrate(pg.url), migrate(pg.url)]);
  for (const run of runs) {
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).not.toContain(password);
  }
  const applied = runs.map((run) => JSON.parse(run.stdout.trim().split("\n").at(-1)!) as { engine: string; applied: number[]; version: number });
  expect(applied.map((a) => [a.engine, a.version])).toEqual([["postgres", NEWEST], ["postgres", NEWEST]]);
  expect(applied.flatMap((a) => a.applied).sort((x, y) => x - y)).toEqual(ALL);
  const again = await migrate(pg.url);
  expect(JSON.parse(again.stdout.trim())).toEqual({ engine: "postgres", applied: [], version: NEWEST });
  const [{ n }] = await pg.sql`SELECT count(*)::int AS n FROM schema_migrations`;
  expect(n).toBe(ALL.length);
});

test("regkb migrate on an unreachable server fails with the URL redacted", () => {
  const run = runBinary(["migrate", "--database-url", "postgres://regkb:hunter2@127.0.0.1:1/regkb"]);
  expect(run.exitCode).toBe(1);
  expect(run.stderr).toStartWith("regkb migrate: PostgreSQL at postgres://regkb:***@127.0.0.1:1/regkb: ");
  expect(run.stdout + run.stderr).not.toContain("hunter2");
});

test("regkb serve with a database URL refuses in one line, exit status 2, before opening anything", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "regkb-pg-serve-"));
  try {
    const run = runBinary(["serve", "--data-dir", dataDir, "--port", "0", "--database-url", pg.url]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toBe(
      "regkb serve: a database URL is set (REGKB_DATABASE_URL / --database-url) but serving from PostgreSQL is not available in this version; the schema can be prepared with `regkb migrate`\n",
    );
    const viaEnv = runBinary(["org", "list", "--data-dir", dataDir], { env: { REGKB_DATABASE_URL: pg.url } });
    expect(viaEnv.exitCode).toBe(2);
    expect(viaEnv.stderr).toContain("regkb org list: a database URL is set");
    expect(viaEnv.stderr).not.toContain(decodeURIComponent(new URL(pg.url).password));
    expect(Bun.file(join(dataDir, "regkb.sqlite")).size).toBe(0);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test("regkb migrate without a database URL migrates the data directory's SQLite database", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "regkb-sqlite-migrate-"));
  try {
    const first = runBinary(["migrate", "--data-dir", dataDir, "--json"]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(first.json).toEqual({ engine: "sqlite", applied: ALL, version: NEWEST });
    expect(runBinary(["migrate", "--data-dir", dataDir, "--json"]).json).toEqual({ engine: "sqlite", applied: [], version: NEWEST });
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
