// The two syscall allowlists, and why each entry is there.
//
// Each list started from an strace of the real workload on this machine (re-measured for matplotlib)
// and was then widened with calls a runtime makes on paths a single trace misses (docs/seal.md
// pitfall 7: glibc frees a dead thread's stack with madvise; libffi probes statfs; timers, polls and
// signal returns that only show up under load). Every profile is
// validated with a KILL default on real workloads by test/jail/profiles.test.ts, so a missing entry
// shows up there as a dead process rather than as an EPERM in production.
//
// Never on any list (the default answers them): socket/connect/bind and every other network call,
// fork/vfork and clone without CLONE_THREAD, kill/tkill, ptrace and process_vm_*, unshare/setns/
// mount/pivot_root/chroot, bpf, perf_event_open, userfaultfd, keyctl/add_key, memfd_create,
// open_by_handle_at, io_uring (its submissions would bypass this filter), sysv/posix IPC, personality,
// set*uid/set*gid, module/kexec/reboot calls. `execve` has to stay: bubblewrap installs the filter and
// then execs the program. An exec inside the jail replaces the process with another one under the same
// filter, uid and mounts; it cannot add a process.

import { ENOSYS, EPERM, errno, type ArgRule, type SeccompAction, type SeccompProfile } from "./seccomp.ts";

const CLONE_THREAD = 0x00010000;
// CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
const CLONE_NEW_ANY = 0x7e020080;

/** clone: threads only. fork and posix_spawn (clone without CLONE_THREAD) and new namespaces get EPERM. */
const cloneThreadsOnly: ArgRule = {
  syscall: "clone",
  when: [{ arg: 0, op: "maskedEq", mask: CLONE_THREAD | CLONE_NEW_ANY, value: CLONE_THREAD }],
};

// ioctl: everything but the terminal-injection and line-discipline requests. The jail has no tty
// (stdio are pipes, `--new-session`), so these are belt and braces.
const TIOCSTI = 0x5412;
const TIOCLINUX = 0x541c;
const TIOCSETD = 0x5423;
const ioctlNoTty: ArgRule = {
  syscall: "ioctl",
  when: [{ arg: 1, op: "notIn", values: [TIOCSTI, TIOCLINUX, TIOCSETD] }],
};

// prctl: naming threads (libuv, OpenBLAS), naming anonymous mappings (glibc/V8), and reading the
// dumpable flag. Not PR_SET_SECCOMP, PR_SET_DUMPABLE, PR_SET_PTRACER, PR_CAP_AMBIENT, PR_SET_MM, …
const PR_GET_DUMPABLE = 3;
const PR_SET_NAME = 15;
const PR_GET_NAME = 16;
const PR_SET_VMA = 0x53564d41;
const prctlNames: ArgRule = {
  syscall: "prctl",
  when: [{ arg: 0, op: "in", values: [PR_GET_DUMPABLE, PR_SET_NAME, PR_GET_NAME, PR_SET_VMA] }],
};

// socketpair(AF_UNIX) only: asyncio's event loop wakes itself through one (its "self-pipe"). The pair
// is connected to nothing but itself; socket(), connect(), bind() and listen() stay denied, so no
// socket can ever reach outside the process.
const AF_UNIX = 1;
const socketpairUnix: ArgRule = { syscall: "socketpair", when: [{ arg: 0, op: "in", values: [AF_UNIX] }] };

/** Probes a runtime makes and handles: answered the same way in production and in the kill test mode. */
const PROBES: Record<string, SeccompAction> = {
  // glibc tries clone3 first and falls back to clone (which the rule above can inspect) on ENOSYS.
  clone3: errno(ENOSYS),
  // Denied on purpose, and tried by ordinary code that copes with the refusal (uuid1's MAC lookup,
  // getaddrinfo, logging handlers): an EPERM in the kill mode too, so only *unplanned* calls kill.
  socket: errno(EPERM),
};

/** What any process in the jail needs: its own memory, threads, time, signals, and I/O on open fds. */
const RUNTIME = [
  // I/O on descriptors it already holds or opens (paths are confined by the mount namespace)
  "read",
  "write",
  "readv",
  "writev",
  "pread64",
  "pwrite64",
  "preadv",
  "pwritev",
  "preadv2",
  "pwritev2",
  "lseek",
  "close",
  "close_range",
  "dup",
  "dup2",
  "dup3",
  "fcntl",
  "pipe",
  "pipe2",
  "fadvise64",
  "poll",
  "ppoll",
  "select",
  "pselect6",
  "epoll_create",
  "epoll_create1",
  "epoll_ctl",
  "epoll_wait",
  "epoll_pwait",
  "epoll_pwait2",
  "eventfd2",
  // Node's "pipe" stdio are Unix socketpairs, and libuv asks what an inherited fd is. These only read
  // or end sockets the process was handed; creating, connecting, binding or listening stays denied.
  "getsockname",
  "getpeername",
  "getsockopt",
  "shutdown",
  // file metadata and reads
  "open",
  "openat",
  "stat",
  "fstat",
  "lstat",
  "newfstatat",
  "statx",
  "statfs",
  "fstatfs",
  "access",
  "faccessat",
  "faccessat2",
  "readlink",
  "readlinkat",
  "getdents64",
  "getcwd",
  // memory
  // (not mincore: it would tell the guest which pages of the host's shared libraries are cached)
  "brk",
  "mmap",
  "munmap",
  "mprotect",
  "mremap",
  "madvise",
  "msync",
  "membarrier",
  // threads and exit
  "futex",
  "set_robust_list",
  "get_robust_list",
  "set_tid_address",
  "rseq",
  "gettid",
  "getpid",
  "getppid",
  "exit",
  "exit_group",
  "sched_yield",
  "sched_getaffinity",
  "sched_getparam",
  "sched_getscheduler",
  "sched_get_priority_max",
  "sched_get_priority_min",
  // signals: its own only (tgkill is how raise() and thread cancellation signal a thread; kill/tkill are out)
  "rt_sigaction",
  "rt_sigprocmask",
  "rt_sigreturn",
  "rt_sigsuspend",
  "rt_sigtimedwait",
  "sigaltstack",
  "restart_syscall",
  "tgkill",
  "setitimer",
  "getitimer",
  "alarm",
  // time
  "nanosleep",
  "clock_nanosleep",
  "clock_gettime",
  "clock_getres",
  "gettimeofday",
  "time",
  "times",
  "getrusage",
  // identity and limits (read-only; prlimit64 can only lower, or raise a soft limit up to the hard one we set)
  "getuid",
  "geteuid",
  "getgid",
  "getegid",
  "getgroups",
  "getresuid",
  "getresgid",
  "getpgrp",
  "getpgid",
  "getsid",
  "capget",
  "uname",
  "sysinfo",
  "getrandom",
  "prlimit64",
  "getrlimit",
  "arch_prctl",
  // program start (bubblewrap execs the program after installing the filter)
  "execve",
  // bubblewrap's pid-1 reaper runs under the filter too and loops on wait() (docs/seal.md pitfall 4)
  "wait4",
];

/**
 * Node (22/24/26) running Pyodide (and QuickJS-wasm). No file writes: Node's permission model
 * denies them anyway, and Pyodide's files live in its in-memory file system.
 */
export const NODE_PYODIDE: SeccompProfile = Object.freeze({
  name: "node-pyodide",
  allow: [
    ...RUNTIME,
    // V8 protection keys for its code space
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
  ],
  rules: [cloneThreadsOnly, ioctlNoTty, prctlNames],
  fixed: {
    ...PROBES,
    // libuv on Node ≥ 22 probes io_uring at start and falls back to epoll. Must stay denied: the ops a
    // ring carries are never seen by seccomp.
    io_uring_setup: errno(EPERM),
    io_uring_enter: errno(EPERM),
    io_uring_register: errno(EPERM),
  },
});

/**
 * Debian's /usr/bin/python3 with numpy, pandas and matplotlib. It writes files (into the tmpfs working
 * directory: that is where outputs come from), uses NUMA hints (OpenBLAS), runs asyncio (top-level
 * await) and may ask for a process.
 */
export const PYTHON_NATIVE: SeccompProfile = Object.freeze({
  name: "python-native",
  allow: [
    ...RUNTIME,
    // writes in the jail's tmpfs (the mount namespace decides where they can land: nowhere else is writable)
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "link",
    "linkat",
    // flock and fcntl's locks stay: sqlite3 needs them in the tmpfs. On the read-only binds a guest
    // could at most hold a read lock that a host writer of the same file would wait for.
    "symlink",
    "symlinkat",
    "ftruncate",
    "truncate",
    "fallocate",
    "fsync",
    "fdatasync",
    "flock",
    "fchmod",
    "fchmodat",
    "chmod",
    "umask",
    "utimensat",
    "chdir",
    "fchdir",
    "sendfile",
    "copy_file_range",
    // extended attributes (shutil.copy2/copystat copy them; EPERM would make those raise)
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    "setxattr",
    "lsetxattr",
    "fsetxattr",
    "removexattr",
    "lremovexattr",
    "fremovexattr",
    // OpenBLAS NUMA hints
    "mbind",
    "get_mempolicy",
    // send/recv on the sockets the process holds: its asyncio socketpair and its stdio
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
  ],
  rules: [cloneThreadsOnly, ioctlNoTty, prctlNames, socketpairUnix],
  fixed: {
    ...PROBES,
    // platform.processor() runs `uname -p` through vfork; subprocess uses vfork too. A clear EPERM
    // (PermissionError in Python) in both modes: the attempt is expected, and it must fail.
    vfork: errno(EPERM),
    fork: errno(EPERM),
    execveat: errno(EPERM),
    io_uring_setup: errno(EPERM),
  },
});

// socket(): AF_UNIX or AF_INET, SOCK_STREAM only (the type's low bits; SOCK_CLOEXEC/SOCK_NONBLOCK may
// be set), protocol 0 or TCP. No UDP (so no DNS query could be sent even if a resolver were there), no
// AF_INET6, AF_NETLINK, AF_PACKET or SOCK_RAW (raw sockets need CAP_NET_RAW as well, which bwrap drops).
const AF_INET = 2;
const SOCK_STREAM = 1;
const SOCK_TYPE_MASK = 0xf;
const IPPROTO_TCP = 6;
const socketStream: ArgRule = {
  syscall: "socket",
  when: [
    { arg: 0, op: "in", values: [AF_UNIX, AF_INET] },
    { arg: 1, op: "maskedEq", mask: SOCK_TYPE_MASK, value: SOCK_STREAM },
    { arg: 2, op: "in", values: [0, IPPROTO_TCP] },
  ],
};

/**
 * PYTHON_NATIVE for a run that has the network option: the bridge inside the jail
 * (src/engines/native/bridge.py) listens on 127.0.0.1 and connects to the host proxy's unix socket.
 *
 * What this widens, and why it stays closed: the guest, too, can now make TCP and unix stream sockets,
 * connect, bind and listen. But the jail's network namespace is its own and holds only `lo` (no route
 * anywhere: a connect to any other address fails with ENETUNREACH), so a TCP socket reaches only
 * listeners inside the jail — the bridge, and whatever the guest itself listens on. A unix socket
 * reaches only paths in the jail's mount namespace (the proxy's socket is the only one there) or
 * abstract names, which are scoped by network namespace and so hold only the jail's own. Every road
 * out therefore ends at the host proxy, which applies the run's policy whoever talks to it. Still
 * denied: UDP (DNS), AF_INET6, netlink, packet and raw sockets, and every other call PYTHON_NATIVE
 * denies.
 */
export const PYTHON_NATIVE_NET: SeccompProfile = Object.freeze({
  name: "python-native-net",
  allow: [...PYTHON_NATIVE.allow, "connect", "bind", "listen", "accept", "accept4", "setsockopt"],
  rules: [...PYTHON_NATIVE.rules, socketStream],
  fixed: Object.fromEntries(Object.entries(PYTHON_NATIVE.fixed).filter(([name]) => name !== "socket")),
});

export const PROFILES = {
  "node-pyodide": NODE_PYODIDE,
  "python-native": PYTHON_NATIVE,
  "python-native-net": PYTHON_NATIVE_NET,
} as const;
export type SeccompProfileName = keyof typeof PROFILES;
