import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, tempDir } from "../helpers/server";
import { DashboardClient } from "./client";

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");
const dataDir = tempDir();
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function regkb(...args: string[]): { exitCode: number; json: any; stdout: string; stderr: string } {
  const proc = Bun.spawnSync([process.execPath, MAIN, ...args, "--data-dir", dataDir, "--json"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", REGKB_LOG_LEVEL: "silent" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = proc.stdout.toString();
  return { exitCode: proc.exitCode ?? -1, json: JSON.parse(stdout.trim().split("\n").at(-1)!), stdout, stderr: proc.stderr.toString() };
}

test("regkb user create prints a one-time password that signs in once, then must be replaced", async () => {
  const org = regkb("org", "create", "--name", "Operator Co");
  expect(org.exitCode).toBe(0);
  const created = regkb("user", "create", "--org", org.json.id, "--email", "Ops@Example.com");
  expect(created.exitCode).toBe(0);
  expect(created.json.email).toBe("ops@example.com");
  expect(created.json.oneTimePassword).toMatch(/^[2-9a-zA-Z]{5}(-[2-9a-zA-Z]{5}){3}$/);
  expect(created.json.signInUrl).toEndWith("/login");

  const duplicate = regkb("user", "create", "--org", org.json.id, "--email", "ops@example.com");
  expect(duplicate.exitCode).toBe(1);
  expect(duplicate.json.error).toBe("user_exists");
  expect(regkb("user", "create", "--org", org.json.id, "--email", "not-an-email").json.error).toBe("validation_failed");
  expect(regkb("user", "list", "--org", org.json.id).json.users).toMatchObject([{ email: "ops@example.com", mustChoosePassword: true }]);

  const server = await startTestServer({ background: false, dataDir });
  try {
    const client = new DashboardClient(server.url);
    const signIn = await client.signIn("ops@example.com", created.json.oneTimePassword);
    expect(signIn.headers.get("location")).toBe("/password");
  } finally {
    await server.stop();
  }

  // A forgotten password: the operator issues a new one-time password.
  const reset = regkb("user", "reset-password", "--email", "ops@example.com");
  expect(reset.exitCode).toBe(0);
  expect(reset.json.oneTimePassword).not.toBe(created.json.oneTimePassword);
}, 60_000);
