/**
 * Watches the resident memory of a child process (and the processes under it) from the
 * parent, and reports once when it grows past a limit. This is the ceiling rlimits cannot
 * give a Bun process: JavaScriptCore places its first gigabyte or so of objects and arrays
 * inside address space it reserved at start-up, where neither RLIMIT_AS nor RLIMIT_DATA
 * sees them (measured: 1 GiB of JavaScript objects fit under a 64 MiB rlimit headroom).
 */
import { readdirSync, readFileSync } from "node:fs";

const PAGE_BYTES = 4096;
/** Levels followed below the watched process (unshare → sandbox child is one). */
const TREE_DEPTH_MAX = 3;
/** How often memory is sampled; a fast allocator overshoots by what it allocates meanwhile. */
export const MEMORY_WATCH_INTERVAL_MS = 50;

/** Resident bytes of one process; 0 once it is gone. */
function residentBytes(pid: number): number {
  try {
    // statm: size resident shared text lib data dt, in pages.
    return Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * PAGE_BYTES;
  } catch {
    return 0;
  }
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

/** Resident bytes of the processes in `pids` together. */
function residentTreeBytes(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + residentBytes(pid), 0);
}

/**
 * Samples the resident memory of `pid` and the processes under it (found once, now: the
 * watched trees do not fork) every MEMORY_WATCH_INTERVAL_MS, and calls `onExceeded` once if
 * it grows by more than `headroomBytes` from what it holds now. Returns a function that stops.
 */
export function watchResidentMemory(pid: number, headroomBytes: number, onExceeded: () => void): () => void {
  const pids = processTree(pid);
  const limitBytes = residentTreeBytes(pids) + headroomBytes;
  const timer = setInterval(() => {
    if (residentTreeBytes(pids) <= limitBytes) return;
    clearInterval(timer);
    onExceeded();
  }, MEMORY_WATCH_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
