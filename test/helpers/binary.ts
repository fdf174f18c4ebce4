import { existsSync } from "node:fs";
import { join } from "node:path";

export const BINARY = join(import.meta.dir, "..", "..", "dist", "regkb");

/** `npm test` builds dist/regkb first; running a single file needs `npm run build` once. */
export function requireBinary(): string {
  if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run npm run build`);
  return BINARY;
}

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** The last stdout line parsed as JSON (the --json contract). */
  json: any;
}

export function runBinary(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): CliRun {
  const proc = Bun.spawnSync([requireBinary(), ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/tmp", ...options.env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stdout = proc.stdout.toString();
  const last = stdout.trim().split("\n").at(-1) ?? "";
  let json: unknown;
  try {
    json = JSON.parse(last);
  } catch {
    json = undefined;
  }
  return { exitCode: proc.exitCode ?? -1, stdout, stderr: proc.stderr.toString(), json };
}

/**
 * The URL a `regkb serve` child prints once it listens; its stdout is then drained, so the
 * server never blocks on a full pipe (a read cut short by its exit is no error here).
 */
export async function readListeningUrl(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${seen}`);
    seen += decoder.decode(value);
    const match = /listening on (http:\/\/\S+)/.exec(seen);
    if (match) {
      void (async () => {
        while (!(await reader.read()).done);
      })().catch(() => {});
      return match[1]!;
    }
  }
}
