import { readFileSync } from "node:fs";

/** The namespaces every sandbox child gets; IPC and UTS too, so System V IPC and hostnames are private. */
export const UNSHARE_FLAGS = ["--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child"];

/**
 * `setpriv --pdeathsig KILL` arms `unshare` to die with the server: unshare waits for the
 * sandbox child and would otherwise outlive a server killed outright, and with it the child
 * (which `--kill-child` kills when unshare dies).
 */
const DIE_WITH_PARENT_FLAGS = ["--pdeathsig", "KILL"];

/** `launcher` is the argv prefix that starts a command isolated: setpriv … unshare … */
export type ProbeResult = { ok: true; launcher: string[] } | { ok: false; reason: string };

/**
 * Cheap start-up check that the host offers every isolation layer: x86_64 Linux (the seccomp
 * filter is written for it), seccomp in the kernel, the util-linux `unshare` and `setpriv`
 * commands and unprivileged user namespaces with network, mount and pid namespaces. The first warm child
 * then proves the full lockdown (pivot_root, seccomp TSYNC) for real.
 */
export function probeIsolation(): ProbeResult {
  if (process.platform !== "linux" || process.arch !== "x64") {
    return { ok: false, reason: `the sandbox needs Linux on x86_64, this is ${process.platform}/${process.arch}` };
  }
  let status: string;
  try {
    status = readFileSync("/proc/self/status", "utf8");
  } catch {
    return { ok: false, reason: "cannot read /proc/self/status to check for seccomp" };
  }
  if (!/^Seccomp:/m.test(status)) return { ok: false, reason: "the kernel has no seccomp support" };
  // The server's own PATH, exactly (Bun.which alone falls back to default directories).
  const unsharePath = Bun.which("unshare", { PATH: process.env.PATH ?? "" });
  if (!unsharePath) return { ok: false, reason: "the util-linux `unshare` command is not installed" };
  const setprivPath = Bun.which("setpriv", { PATH: process.env.PATH ?? "" });
  if (!setprivPath) return { ok: false, reason: "the util-linux `setpriv` command is not installed" };
  const launcher = [setprivPath, ...DIE_WITH_PARENT_FLAGS, unsharePath, ...UNSHARE_FLAGS];
  const trial = Bun.spawnSync([...launcher, "true"], { env: {}, stdout: "ignore", stderr: "pipe", timeout: 10_000 });
  if (trial.exitCode !== 0) {
    const detail = trial.stderr.toString().trim().slice(0, 300) || `exit ${trial.exitCode ?? trial.signalCode}`;
    return { ok: false, reason: `setpriv --pdeathsig or user/network/mount/pid namespaces are refused: ${detail}` };
  }
  return { ok: true, launcher };
}
