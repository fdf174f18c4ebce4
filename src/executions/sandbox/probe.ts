import { readFileSync } from "node:fs";

/** The namespaces every sandbox child gets; IPC and UTS too, so System V IPC and hostnames are private. */
export const UNSHARE_FLAGS = ["--user", "--map-root-user", "--net", "--mount", "--pid", "--ipc", "--uts", "--fork", "--kill-child"];

export type ProbeResult = { ok: true; unsharePath: string } | { ok: false; reason: string };

/**
 * Cheap start-up check that the host offers every isolation layer: x86_64 Linux (the seccomp
 * filter is written for it), seccomp in the kernel, the util-linux `unshare` command and
 * unprivileged user namespaces with network, mount and pid namespaces. The first warm child
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
  const trial = Bun.spawnSync([unsharePath, ...UNSHARE_FLAGS, "true"], { env: {}, stdout: "ignore", stderr: "pipe", timeout: 10_000 });
  if (trial.exitCode !== 0) {
    const detail = trial.stderr.toString().trim().slice(0, 300) || `exit ${trial.exitCode ?? trial.signalCode}`;
    return { ok: false, reason: `user/network/mount/pid namespaces are refused: ${detail}` };
  }
  return { ok: true, unsharePath };
}
