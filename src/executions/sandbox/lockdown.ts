import { dlopen, ptr, read, type Pointer } from "bun:ffi";
import { limitMemoryGrowth, RLIMIT_CORE, RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, setResourceLimit } from "../../platform/process-controls";
import { buildSeccompProgram, encodeSeccompProgram } from "./seccomp";

/**
 * The sandbox child's self-lockdown, in the order that works for a multi-threaded Bun:
 * resource limits, then an empty read-only root, then a seccomp filter applied to every
 * thread at once (TSYNC). unshare(2) and landlock are per-thread and so unusable here;
 * the namespaces come from the `unshare` command that started us.
 */

const MS_RDONLY = 0x1;
const MS_NOSUID = 0x2;
const MS_NODEV = 0x4;
const MS_NOEXEC = 0x8;
const MS_REMOUNT = 0x20;
const MS_BIND = 0x1000;
const MS_REC = 0x4000;
const MS_PRIVATE = 0x40000;
const MNT_DETACH = 2;

const SYS_PIVOT_ROOT = 155;
const SYS_SECCOMP = 317;
const SECCOMP_SET_MODE_FILTER = 1;
const SECCOMP_FILTER_FLAG_TSYNC = 1;
const PR_SET_NO_NEW_PRIVS = 38;
const PR_SET_DUMPABLE = 4;

/** Enough descriptors for Bun's own (epoll, eventfds, stdio); none are opened after lockdown. */
const OPEN_FILES_MAX = 64;

export class LockdownError extends Error {}

function libc() {
  return dlopen("libc.so.6", {
    prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
    mount: { args: ["ptr", "ptr", "ptr", "u64", "ptr"], returns: "i32" },
    umount2: { args: ["ptr", "i32"], returns: "i32" },
    chdir: { args: ["ptr"], returns: "i32" },
    syscall: { args: ["i64", "i64", "i64", "i64"], returns: "i64" },
    __errno_location: { args: [], returns: "ptr" },
    strerror: { args: ["i32"], returns: "cstring" },
  });
}

type Libc = ReturnType<typeof libc>["symbols"];

function cString(value: string): Uint8Array {
  return new TextEncoder().encode(`${value}\0`);
}

function check(lib: Libc, result: number | bigint, what: string): void {
  if (Number(result) === -1) {
    const errno = read.i32(lib.__errno_location() as Pointer, 0);
    throw new LockdownError(`${what}: ${String(lib.strerror(errno))} (errno ${errno})`);
  }
}

/**
 * rlimits every mode gets, isolated or not. NPROC is deliberately absent: it counts the
 * user's threads, and Bun needs threads. CPU is a backstop behind the parent's deadline.
 * Memory: `memoryBytes` on top of what the child holds at lockdown, for new mappings and for
 * wasm memory growing inside its reservation alike (limitMemoryGrowth). The limit is relative
 * because JavaScriptCore has reserved its heap, JIT and wasm regions by then (VmSize is
 * several GiB, mostly untouched): a fixed cap would refuse every later mmap and crash Bun.
 * Python's own heap is held to the same figure by its wasm memory maximum (child.ts), and
 * the parent watches the resident total, which the rlimits alone cannot bound (pool.ts).
 */
export function applyResourceLimits(cpuBudgetSeconds: number, memoryBytes: number): void {
  const lib = libc().symbols;
  const usage = process.cpuUsage();
  const usedSeconds = Math.ceil((usage.user + usage.system) / 1e6);
  try {
    setResourceLimit(RLIMIT_CORE, 0n, "CORE");
    setResourceLimit(RLIMIT_FSIZE, 0n, "FSIZE");
    setResourceLimit(RLIMIT_NOFILE, BigInt(OPEN_FILES_MAX), "NOFILE");
    limitMemoryGrowth(memoryBytes);
    setResourceLimit(RLIMIT_CPU, BigInt(usedSeconds + cpuBudgetSeconds), "CPU");
  } catch (error) {
    throw new LockdownError((error as Error).message);
  }
  check(lib, lib.prctl(PR_SET_DUMPABLE, 0n, 0n, 0n, 0n), "prctl PR_SET_DUMPABLE");
}

/**
 * Replace the filesystem view with an empty read-only tmpfs. Needs the private mount
 * namespace and user-namespace root that `unshare --user --map-root-user --mount` gives.
 * `mountPoint` is any existing directory: the tmpfs is mounted over it, becomes `/`, and
 * the old root is detached.
 */
export function pivotIntoEmptyRoot(mountPoint: string): void {
  const lib = libc().symbols;
  const root = cString("/");
  const dot = cString(".");
  const target = cString(mountPoint);
  check(lib, lib.mount(null, root, null, BigInt(MS_REC | MS_PRIVATE), null), "make mounts private");
  const tmpfs = cString("tmpfs");
  check(
    lib,
    lib.mount(tmpfs, target, tmpfs, BigInt(MS_NOSUID | MS_NODEV | MS_NOEXEC), cString("size=4k,nr_inodes=2,mode=0555")),
    "mount tmpfs",
  );
  check(lib, lib.chdir(target), "chdir new root");
  // pivot_root(".", ".") stacks the old root under the new one; detaching "." then removes it.
  check(lib, lib.syscall(BigInt(SYS_PIVOT_ROOT), BigInt(ptr(dot)), BigInt(ptr(dot)), 0n), "pivot_root");
  check(lib, lib.umount2(dot, MNT_DETACH), "detach old root");
  check(lib, lib.chdir(root), "chdir /");
  const flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
  check(lib, lib.mount(null, root, null, BigInt(flags), null), "remount root read-only");
}

/** Install the filter on every thread of the process; irreversible (NO_NEW_PRIVS first, as the kernel requires). */
export function installSeccomp(): void {
  if (process.arch !== "x64") throw new LockdownError(`seccomp filter is written for x86_64, not ${process.arch}`);
  const lib = libc().symbols;
  const filter = encodeSeccompProgram(buildSeccompProgram(process.pid));
  // struct sock_fprog { unsigned short len; struct sock_filter *filter; } — 16 bytes on x86_64.
  const fprog = new BigUint64Array(2);
  fprog[0] = BigInt(filter.length / 8);
  fprog[1] = BigInt(ptr(filter));
  check(lib, lib.prctl(PR_SET_NO_NEW_PRIVS, 1n, 0n, 0n, 0n), "prctl PR_SET_NO_NEW_PRIVS");
  const result = lib.syscall(
    BigInt(SYS_SECCOMP),
    BigInt(SECCOMP_SET_MODE_FILTER),
    BigInt(SECCOMP_FILTER_FLAG_TSYNC),
    BigInt(ptr(fprog)),
  );
  // With TSYNC a positive result is the id of a thread that could not be synchronised.
  if (Number(result) > 0) throw new LockdownError(`seccomp TSYNC failed on thread ${result}`);
  check(lib, result, "seccomp");
}
