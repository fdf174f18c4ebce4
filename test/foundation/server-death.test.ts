import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary, runBinary } from "../helpers/binary";
import { startTestServer, tempDir } from "../helpers/server";
import { TEST_SANDBOX_CACHE_DIR } from "../executions/pool-helper";
import { policyPdf } from "../fixtures/pdf/writer";

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const cleanup of cleanups) cleanup();
});

describe("a crash leaves nothing behind", () => {
  test("half-written uploads are removed when the server starts; a live writer's file is kept", async () => {
    const dataDir = tempDir();
    const orgDir = join(dataDir, "documents", "0190c7c0-0000-7000-8000-000000000001");
    mkdirSync(orgDir, { recursive: true });
    const liveWriter = Bun.spawn(["sleep", "60"]);
    cleanups.push(() => liveWriter.kill());
    // A pid that cannot be a live process (above the kernel's pid_max).
    const stale = "0190c7c0-0000-7000-8000-00000000000a.pdf.4194305.partial";
    const mine = `0190c7c0-0000-7000-8000-00000000000b.pdf.${process.pid}.partial`;
    const live = `0190c7c0-0000-7000-8000-00000000000c.pdf.${liveWriter.pid}.partial`;
    const complete = "0190c7c0-0000-7000-8000-00000000000d.pdf";
    for (const name of [stale, mine, live, complete]) writeFileSync(join(orgDir, name), "%PDF-1.7 half");

    const server = await startTestServer({ dataDir });
    try {
      expect(readdirSync(orgDir).sort()).toEqual([complete, live].sort());
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** Every process below `pid`, found through /proc. */
function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Exited while we looked.
    }
  }
  const found: number[] = [];
  for (let frontier = [pid]; frontier.length > 0; ) {
    frontier = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...frontier);
  }
  return found;
}

/** Alive means not gone and not a zombie (a dead process its new parent has not reaped yet). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

/** CPU time used so far, in clock ticks (user + system). */
function cpuTicks(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

test("a SIGKILLed server takes its sandbox and PDF parser children with it at once", async () => {
  const dataDir = tempDir();
  const orgId = runBinary(["org", "create", "--name", "Crash Ltd", "--data-dir", dataDir, "--json"]).json.id as string;
  const key = runBinary(["key", "create", "--org", orgId, "--data-dir", dataDir, "--json"]).json.key as string;
  expect(runBinary(["credits", "top-up", "--org", orgId, "--amount-pence", "5000", "--data-dir", dataDir, "--json"]).exitCode).toBe(0);
  // The shared sandbox snapshot cache joins once the database exists (a cache beside no database is refused without --init).
  rmSync(join(dataDir, "cache"), { recursive: true, force: true });
  mkdirSync(TEST_SANDBOX_CACHE_DIR, { recursive: true });
  symlinkSync(TEST_SANDBOX_CACHE_DIR, join(dataDir, "cache"));

  const server = Bun.spawn([requireBinary(), "serve", "--data-dir", dataDir, "--port", "0"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", REGKB_SANDBOX_POOL_SIZE: "2", REGKB_LOG_LEVEL: "info" },
    stdout: "pipe",
    stderr: "pipe",
  });
  cleanups.push(() => {
    server.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });
  let log = "";
  let output = "";
  void (async () => {
    for await (const chunk of server.stderr) log += new TextDecoder().decode(chunk);
  })();
  void (async () => {
    for await (const chunk of server.stdout) output += new TextDecoder().decode(chunk);
  })();
  const until = async (what: string, condition: () => boolean | Promise<boolean>) => {
    const deadline = Date.now() + 60_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; log: ${log.slice(-2000)}`);
      await Bun.sleep(50);
    }
  };
  await until("the server to listen", () => output.includes("regkb listening on "));
  const url = /regkb listening on (\S+)/.exec(output)![1]!;
  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${key}`, ...init.headers } }).then((res) => res.json() as Promise<any>);

  // A run spinning in Python (the sandbox child would go on until its CPU limit), …
  const execution = await api("/v1/executions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code: "print('spinning', flush=True)\nwhile True: pass", timeoutSeconds: 120 }),
  });
  await until("the execution to run", async () => (await api(`/v1/executions/${execution.id}`)).status === "running");
  await until("two more warm sandboxes", () => log.split("sandbox_child_ready").length - 1 >= 3);
  // … and a 400-page PDF being read (its parser child would go on until the text was out).
  const form = new FormData();
  form.append("file", new File([policyPdf(400, 60) as Uint8Array<ArrayBuffer>], "handbook.pdf", { type: "application/pdf" }));
  expect((await api("/v1/documents", { method: "POST", body: form })).status).toBe("processing");
  const pdfChildren = () => descendants(server.pid).filter((pid) => commandOf(pid).includes("__pdf"));
  await until("a PDF child to be extracting text", async () => {
    const before = pdfChildren().map(cpuTicks);
    await Bun.sleep(200);
    return pdfChildren().some((pid, index) => cpuTicks(pid) - (before[index] ?? 0) >= 10);
  });

  const children = descendants(server.pid);
  const commands = children.map(commandOf);
  expect(commands.filter((command) => command.includes("__sandbox") && !command.includes("unshare")).length).toBeGreaterThanOrEqual(3);
  expect(commands.filter((command) => command.includes("__pdf")).length).toBeGreaterThanOrEqual(1);

  server.kill("SIGKILL");
  const killedMs = performance.now();
  await until("every child to die", () => children.every((pid) => !alive(pid)) || performance.now() - killedMs > 5_000);
  const survivors = children.filter(alive).map(commandOf);
  expect(survivors).toEqual([]);
  expect(performance.now() - killedMs).toBeLessThan(2_000);
  expect(existsSync(dataDir)).toBe(true);
}, 120_000);
