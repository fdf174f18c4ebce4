import { join } from "node:path";

export interface Child {
  url: string;
  proc: ReturnType<typeof Bun.spawn>;
  stop(): Promise<void>;
}

/** Starts paid-child.ts over `dataDir` and waits for the URL it prints (bounded). */
export async function startPaidChild(dataDir: string, args: string[] = []): Promise<Child> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "paid-child.ts"), dataDir, ...args], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = proc.stdout.getReader();
  let text = "";
  const deadline = Date.now() + 30_000;
  while (!text.includes("\n")) {
    if (Date.now() > deadline) throw new Error("child did not start within 30 s");
    const { value, done } = await reader.read();
    if (done) throw new Error(`child exited before printing its URL: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    url: text.trim().split("\n")[0]!,
    proc,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}
