/**
 * The seccomp-bpf program the sandbox child installs on itself (x86_64 only).
 *
 * Deny-list rather than allow-list: Bun and JavaScriptCore use a wide, version-dependent set
 * of syscalls (futex, mmap, madvise, epoll, eventfd, getrandom, …) that we cannot enumerate
 * safely, while the dangerous families are few and stable: creating file descriptors to
 * anything outside the process, creating processes, signalling others, touching the
 * filesystem or namespaces, and kernel attack surface (bpf, io_uring, userfaultfd, keyctl).
 * Namespaces and the empty read-only root back this up when a call slips through.
 */

export const AUDIT_ARCH_X86_64 = 0xc000003e;

const EPERM = 1;
const ENOSYS = 38;

const RET_KILL_PROCESS = 0x80000000;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const JMP_JSET_K = 0x45;
const RET_K = 0x06;

// struct seccomp_data offsets: nr (u32), arch (u32), ip (u64), args[6] (u64, little-endian).
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

const X32_SYSCALL_BIT = 0x40000000;
const CLONE_THREAD = 0x00010000;
// CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET | NEWTIME.
const CLONE_NEW_ANY = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080;

const SYS_CLONE = 56;
const SYS_CLONE3 = 435;
const SYS_TGKILL = 234;

/** x86_64 syscall numbers answered with EPERM. */
export const DENIED_SYSCALLS_X86_64: Readonly<Record<string, number>> = {
  // New file descriptors onto the filesystem or the network.
  open: 2, openat: 257, openat2: 437, creat: 85, open_by_handle_at: 304, name_to_handle_at: 303,
  socket: 41, connect: 42, accept: 43, bind: 49, listen: 50, accept4: 288, socketpair: 53,
  // New processes and other processes.
  fork: 57, vfork: 58, execve: 59, execveat: 322,
  kill: 62, tkill: 200, rt_sigqueueinfo: 129, rt_tgsigqueueinfo: 297, pidfd_open: 434, pidfd_send_signal: 424, pidfd_getfd: 438,
  ptrace: 101, process_vm_readv: 310, process_vm_writev: 311, process_madvise: 440, kcmp: 312,
  // Filesystem changes.
  unlink: 87, unlinkat: 263, rename: 82, renameat: 264, renameat2: 316, mkdir: 83, mkdirat: 258,
  rmdir: 84, link: 86, linkat: 265, symlink: 88, symlinkat: 266, chmod: 90, fchmod: 91,
  fchmodat: 268, fchmodat2: 452, chown: 92, fchown: 93, lchown: 94, fchownat: 260, truncate: 76,
  mknod: 133, mknodat: 259, utime: 132, utimes: 235, utimensat: 280, futimesat: 261,
  setxattr: 188, lsetxattr: 189, fsetxattr: 190, removexattr: 197, lremovexattr: 198, fremovexattr: 199,
  // Mounts and namespaces.
  mount: 165, umount2: 166, pivot_root: 155, chroot: 161, unshare: 272, setns: 308,
  open_tree: 428, move_mount: 429, fsopen: 430, fsconfig: 431, fsmount: 432, fspick: 433, mount_setattr: 442,
  // System V and POSIX IPC would otherwise be a channel between sandboxes.
  shmget: 29, shmat: 30, shmctl: 31, semget: 64, semop: 65, semctl: 66, semtimedop: 220,
  msgget: 68, msgsnd: 69, msgrcv: 70, msgctl: 71, mq_open: 240, mq_unlink: 241,
  // Kernel attack surface.
  bpf: 321, perf_event_open: 298, userfaultfd: 323, keyctl: 250, add_key: 248, request_key: 249,
  io_uring_setup: 425, io_uring_enter: 426, io_uring_register: 427,
  init_module: 175, finit_module: 313, delete_module: 176, kexec_load: 246, kexec_file_load: 320,
  reboot: 169, swapon: 167, swapoff: 168, acct: 163, quotactl: 179, quotactl_fd: 443,
  sethostname: 170, setdomainname: 171, iopl: 172, ioperm: 173, syslog: 103, vhangup: 153,
  personality: 135, uselib: 134, lookup_dcookie: 212, move_pages: 279, migrate_pages: 256,
  // Identity and the limits set just before this filter.
  setuid: 105, setgid: 106, setreuid: 113, setregid: 114, setresuid: 117, setresgid: 119,
  setfsuid: 122, setfsgid: 123, setgroups: 116, setrlimit: 160, prlimit64: 302,
  landlock_create_ruleset: 444, landlock_add_rule: 445, landlock_restrict_self: 446, seccomp: 317,
};

function instruction(code: number, jt: number, jf: number, k: number): number[] {
  return [code, jt, jf, k >>> 0];
}

/**
 * Build the filter as an array of sock_filter tuples [code, jt, jf, k].
 * `ownPid` is the only thread-group tgkill may target (JavaScriptCore signals its own
 * threads to stop them for garbage collection).
 */
export function buildSeccompProgram(ownPid: number): number[][] {
  const program: number[][] = [];
  const retErrno = (errno: number) => instruction(RET_K, 0, 0, RET_ERRNO | errno);

  program.push(instruction(LD_W_ABS, 0, 0, OFFSET_ARCH));
  program.push(instruction(JMP_JEQ_K, 1, 0, AUDIT_ARCH_X86_64));
  program.push(instruction(RET_K, 0, 0, RET_KILL_PROCESS));
  program.push(instruction(LD_W_ABS, 0, 0, OFFSET_NR));
  // The x32 ABI aliases every syscall with bit 30 set; refuse it wholesale.
  program.push(instruction(JMP_JGE_K, 0, 1, X32_SYSCALL_BIT));
  program.push(instruction(RET_K, 0, 0, RET_KILL_PROCESS));

  for (const nr of Object.values(DENIED_SYSCALLS_X86_64)) {
    program.push(instruction(JMP_JEQ_K, 0, 1, nr));
    program.push(retErrno(EPERM));
  }

  // clone3 passes its flags in memory the filter cannot read: ENOSYS makes libc fall back to clone.
  program.push(instruction(JMP_JEQ_K, 0, 1, SYS_CLONE3));
  program.push(retErrno(ENOSYS));

  // clone: threads only (CLONE_THREAD set), and never a new namespace.
  program.push(instruction(JMP_JEQ_K, 0, 5, SYS_CLONE));
  program.push(instruction(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW));
  program.push(instruction(JMP_JSET_K, 0, 2, CLONE_THREAD));
  program.push(instruction(JMP_JSET_K, 1, 0, CLONE_NEW_ANY));
  program.push(instruction(RET_K, 0, 0, RET_ALLOW));
  program.push(retErrno(EPERM));

  // tgkill: only to our own thread group.
  program.push(instruction(JMP_JEQ_K, 0, 4, SYS_TGKILL));
  program.push(instruction(LD_W_ABS, 0, 0, OFFSET_ARG0_LOW));
  program.push(instruction(JMP_JEQ_K, 1, 0, ownPid));
  program.push(retErrno(EPERM));
  program.push(instruction(RET_K, 0, 0, RET_ALLOW));

  program.push(instruction(RET_K, 0, 0, RET_ALLOW));
  return program;
}

/** Encode as the kernel's `struct sock_filter[]` (u16 code, u8 jt, u8 jf, u32 k). */
export function encodeSeccompProgram(program: number[][]): Uint8Array {
  const bytes = new Uint8Array(program.length * 8);
  const view = new DataView(bytes.buffer);
  program.forEach(([code, jt, jf, k], index) => {
    view.setUint16(index * 8, code!, true);
    view.setUint8(index * 8 + 2, jt!);
    view.setUint8(index * 8 + 3, jf!);
    view.setUint32(index * 8 + 4, k!, true);
  });
  return bytes;
}
