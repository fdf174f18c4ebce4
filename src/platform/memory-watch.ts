/**
 * Watches the resident memory of a child process (and the processes under it) from the
 * parent, and reports once when it grows past a limit. This is the ceiling rlimits cannot
 * give a Bun process: JavaScriptCore places its first gigabyte or so of objects and arrays
 * inside address space it reserved at start-up, where neither RLIMIT_AS nor RLIMIT_DATA
 * sees them (measured: 1 GiB of JavaScript objects fit under a 64 MiB rlimit headroom).
 *
 * The figure judged is the kernel's peak (VmHWM), not a sample of the current size: the
 * samples run on the parent's event loop, which a GC or a busy host can hold up for longer
 * than a fast allocator needs to peak, free and answer. The peak still shows it however late
 * the parent looks, and the owner checks once more (check()) before it accepts an answer.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";

const KIB_BYTES = 1024;
/** Levels followed below the watched process (unshare → sandbox child is one). */
const TREE_DEPTH_MAX = 3;
/** How often memory is sampled; a fast allocator overshoots by what it allocates meanwhile. */
export const MEMORY_WATCH_INTERVAL_MS = 50;

/** What check() found: the peak so far is within the limit or past it, or a watched process has ended. */
export type MemoryVerdict = "within" | "exceeded" | "ended";

export interface MemoryWatch {
  /** Looks once more, now; calls `onExceeded` (once) when past the limit. */
  check(): MemoryVerdict;
  stop(): void;
}

interface ProcessMemory {
  residentBytes: number;
  peakBytes: number;
}

/** Current and peak resident bytes of one process; undefined once it has ended (a zombie has neither). */
function processMemory(pid: number): ProcessMemory | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf8");
  } catch {
    return undefined;
  }
  const resident = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  const peak = /^VmHWM:\s+(\d+) kB$/m.exec(status);
  if (!resident || !peak) return undefined;
  return { residentBytes: Number(resident[1]) * KIB_BYTES, peakBytes: Number(peak[1]) * KIB_BYTES };
}

/**
 * Sets the process's peak back to its current size, so a peak from before the watch (Pyodide
 * loading, an earlier PDF) does not count. Measured on Linux 6.18, as root and as an ordinary
 * user, on a child inside unshare's user and pid namespaces that made itself non-dumpable
 * (its /proc files stay owned by the user that started it): VmHWM went from 334 MB to 27 MB.
 * Where the write is refused (before Linux 4.0) the earlier peak stays, and peakSince() copes.
 */
function resetPeak(pid: number): void {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
  } catch {
    // See peakSince().
  }
}

/**
 * The most `pid` held since the watch started: its peak if that has risen since, else (the
 * peak may predate the watch when resetPeak failed) at least what it holds now.
 */
function peakSince(startPeakBytes: number, now: ProcessMemory): number {
  return now.peakBytes > startPeakBytes ? now.peakBytes : now.residentBytes;
}

function childPids(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
  } catch {
    // Kernels without CONFIG_PROC_CHILDREN: find the children by their parent pid.
    const children: number[] = [];
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // stat: pid (comm) state ppid …; comm may hold spaces, so read after its closing parenthesis.
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) children.push(Number(entry));
      } catch {
        // The process ended while we looked.
      }
    }
    return children;
  }
}

/** `pid` and the processes under it, at most TREE_DEPTH_MAX levels down. */
function processTree(pid: number, depth = 0): number[] {
  if (depth >= TREE_DEPTH_MAX) return [pid];
  return [pid, ...childPids(pid).flatMap((child) => processTree(child, depth + 1))];
}

/**
 * Watches `pid` and the processes under it (found once, now: the watched trees do not fork):
 * `onExceeded` is called once if their peaks together grow by more than `headroomBytes` from
 * what they hold now. Sampled every MEMORY_WATCH_INTERVAL_MS until stopped.
 */
export function watchResidentMemory(pid: number, headroomBytes: number, onExceeded: () => void): MemoryWatch {
  const pids = processTree(pid);
  for (const each of pids) resetPeak(each);
  const start = pids.map(processMemory);
  const limitBytes = start.reduce((sum, memory) => sum + (memory?.residentBytes ?? 0), 0) + headroomBytes;
  let exceeded = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => clearInterval(timer);

  const check = (): MemoryVerdict => {
    if (exceeded) return "exceeded";
    let peakBytes = 0;
    let ended = false;
    for (const [index, each] of pids.entries()) {
      const now = processMemory(each);
      if (now) peakBytes += peakSince(start[index]?.peakBytes ?? 0, now);
      else ended ||= start[index] !== undefined;
    }
    if (peakBytes <= limitBytes) return ended ? "ended" : "within";
    exceeded = true;
    stop();
    onExceeded();
    return "exceeded";
  };
  timer = setInterval(check, MEMORY_WATCH_INTERVAL_MS);
  timer.unref();
  return { check, stop };
}
