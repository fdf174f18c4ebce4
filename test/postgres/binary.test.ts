// The compiled binary against a real PostgreSQL: `regkb migrate` prepares the schema (two at
// once apply each version once) without ever printing the password, and the commands that
// cannot use PostgreSQL yet refuse a database URL instead of quietly using SQLite; a node
// does not serve a database whose schema is not this binary's.
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

test("regkb serve on a PostgreSQL database without the schema refuses in one line, naming `regkb migrate`; a command not ported refuses the URL with exit status 2", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "regkb-pg-serve-"));
  try {
    const empty = await pg.createDatabase();
    const run = runBinary(["serve", "--data-dir", dataDir, "--port", "0", "--database-url", empty]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toStartWith("regkb serve: PostgreSQL at postgres://regkb_test:***@");
    expect(run.stderr).toContain(`lacks migrations ${ALL.join(", ")}: run \`regkb migrate --database-url URL\` once, then start the nodes\n`);
    const viaEnv = runBinary(["corpus", "import", "--sample", "--data-dir", dataDir], { env: { REGKB_DATABASE_URL: pg.url } });
    expect(viaEnv.exitCode).toBe(2);
    expect(viaEnv.stderr).toBe(
      "regkb corpus import: a database URL is set (REGKB_DATABASE_URL / --database-url) but this command does not work on PostgreSQL in this version (unset it to use the data directory)\n",
    );
    for (const output of [run.stdout, run.stderr, viaEnv.stdout, viaEnv.stderr]) expect(output).not.toContain(decodeURIComponent(new URL(pg.url).password));
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
