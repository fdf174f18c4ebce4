/**
 * Linux process controls the server's child processes apply to themselves through libc
 * (bun:ffi): resource limits and dying with their parent.
 */
import { dlopen, ptr, read, type Pointer } from "bun:ffi";
import { readFileSync } from "node:fs";

export const RLIMIT_CPU = 0;
export const RLIMIT_FSIZE = 1;
const RLIMIT_DATA = 2;
export const RLIMIT_CORE = 4;
export const RLIMIT_NOFILE = 7;
const RLIMIT_AS = 9;

const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

class ProcessControlError extends Error {}

function libc() {
  return dlopen("libc.so.6", {
    setrlimit: { args: ["i32", "ptr"], returns: "i32" },
    prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
    getppid: { args: [], returns: "i32" },
    __errno_location: { args: [], returns: "ptr" },
    strerror: { args: ["i32"], returns: "cstring" },
  }).symbols;
}

function check(lib: ReturnType<typeof libc>, result: number, what: string): void {
  if (result === -1) {
    const errno = read.i32(lib.__errno_location() as Pointer, 0);
    throw new ProcessControlError(`${what}: ${String(lib.strerror(errno))} (errno ${errno})`);
  }
}

/** Sets a resource limit, soft and hard alike (so the process cannot raise it again). */
export function setResourceLimit(resource: number, value: bigint, what: string): void {
  const lib = libc();
  check(lib, lib.setrlimit(resource, ptr(new BigUint64Array([value, value]))), `setrlimit ${what}`);
}

/** This process's mapped address space (VmSize) and private writable memory (VmData), in bytes. */
function mappedMemory(): { addressSpaceBytes: number; dataBytes: number } {
  const status = readFileSync("/proc/self/status", "utf8");
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB$`, "m").exec(status);
    if (!match) throw new ProcessControlError(`cannot read ${name} from /proc/self/status`);
    return Number(match[1]) * 1024;
  };
  return { addressSpaceBytes: field("VmSize"), dataBytes: field("VmData") };
}

/**
 * Lets this process map `headroomBytes` more than it has mapped now: RLIMIT_AS counts every
 * mapping, RLIMIT_DATA private writable memory, including memory made writable later inside
 * a reservation (how WebAssembly memory grows, unseen by RLIMIT_AS). Relative, because
 * JavaScriptCore reserves gigabytes of address space at start-up that a fixed cap would
 * have to include. What neither can bound: objects JavaScriptCore places inside the heap
 * region it reserved at start-up (about 1 GiB, measured); see memory-watch.ts.
 */
export function limitMemoryGrowth(headroomBytes: number): void {
  const { addressSpaceBytes, dataBytes } = mappedMemory();
  setResourceLimit(RLIMIT_AS, BigInt(addressSpaceBytes + headroomBytes), "AS");
  setResourceLimit(RLIMIT_DATA, BigInt(dataBytes + headroomBytes), "DATA");
}

/**
 * SIGKILL this process as soon as its parent dies (PR_SET_PDEATHSIG), so no child outlives a
 * server that was killed outright. `parentPid` closes the race with a parent that died before
 * this call: then the process exits at once.
 */
export function dieWithParent(parentPid: number | undefined): void {
  const lib = libc();
  check(lib, lib.prctl(PR_SET_PDEATHSIG, BigInt(SIGKILL), 0n, 0n, 0n), "prctl PR_SET_PDEATHSIG");
  if (parentPid !== undefined && lib.getppid() !== parentPid) process.exit(1);
}
