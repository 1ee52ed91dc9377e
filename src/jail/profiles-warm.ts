// The native tier's warm parent and its children (src/engines/native/parent.py): two filters.
//
// The parent's (installed by bubblewrap, like every jail's) is the one profile that may make
// processes and namespaces: it forks each child into a new PID namespace (unshare, fork, setns back),
// and the child unshares new mount, IPC, UTS (and, for a run with network, net) namespaces. The parent runs no guest code: what guest code
// meets is the child filter, which the child installs on top before any guest code runs (seccomp
// filters stack; the strictest verdict wins). The child filter is `python-native` (or
// `python-native-net`): what a cold jail gets, so a child is never looser than a cold jail.
//
// What the parent's list adds to `python-native-net`, and why it stays shut for guest code:
// - clone without CLONE_THREAD (fork) but never with a CLONE_NEW* flag; unshare without CLONE_NEWUSER
//   (the jail's --disable-userns refuses a user namespace anyway); setns for CLONE_NEWPID only (the
//   parent back to its own PID namespace for children). The child's filter denies all three.
// - mount/umount2: the child's private tmpfs. capset: the child drops its capabilities. seccomp and
//   prctl(PR_SET_NO_NEW_PRIVS / PR_SET_SECCOMP): the child installs its filter. pidfd_open/waitid: the
//   parent waits for a keeper beside its stdin.
// - socket(AF_INET/AF_UNIX, any type): the child's ioctl that brings its loopback up.
// The parent holds CAP_SYS_ADMIN and CAP_NET_ADMIN inside the jail's own user namespace only (bubblewrap
// --cap-add): over its mounts and network namespaces, never the host's. Children drop them.

import { PYTHON_NATIVE, PYTHON_NATIVE_NET } from "./profiles.ts";
import type { ArgRule, SeccompProfile } from "./seccomp.ts";

const CLONE_THREAD = 0x00010000;
const CLONE_NEWUSER = 0x10000000;
const CLONE_NEWPID = 0x20000000;
// CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
const CLONE_NEW_ANY = 0x7e020080;

const PR_GET_DUMPABLE = 3;
const PR_SET_NAME = 15;
const PR_GET_NAME = 16;
const PR_SET_SECCOMP = 22;
const PR_SET_NO_NEW_PRIVS = 38;
const PR_SET_VMA = 0x53564d41;
const AF_UNIX = 1;
const AF_INET = 2;

const rule = (name: string): ArgRule => {
  const r = PYTHON_NATIVE.rules.find((x) => x.syscall === name);
  if (!r) throw new Error(`python-native has no rule for ${name}`);
  return r;
};

/** The warm parent: python-native-net, plus what making children takes (see above). */
const PARENT_RULES: readonly ArgRule[] = [
  // threads, and fork: any clone without a new namespace (CLONE_THREAD or not)
  { syscall: "clone", when: [{ arg: 0, op: "maskedEq", mask: CLONE_NEW_ANY, value: 0 }] },
  { syscall: "unshare", when: [{ arg: 0, op: "maskedEq", mask: CLONE_NEWUSER | CLONE_THREAD, value: 0 }] },
  { syscall: "setns", when: [{ arg: 1, op: "in", values: [CLONE_NEWPID] }] },
  rule("ioctl"),
  rule("socketpair"),
  {
    syscall: "prctl",
    when: [
      {
        arg: 0,
        op: "in",
        values: [PR_GET_DUMPABLE, PR_SET_NAME, PR_GET_NAME, PR_SET_VMA, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP],
      },
    ],
  },
  { syscall: "socket", when: [{ arg: 0, op: "in", values: [AF_UNIX, AF_INET] }] },
];

export const PYTHON_NATIVE_PARENT: SeccompProfile = Object.freeze({
  name: "python-native-parent",
  allow: [...PYTHON_NATIVE_NET.allow, "mount", "umount2", "capset", "seccomp", "pidfd_open", "waitid"],
  rules: PARENT_RULES,
  fixed: Object.fromEntries(Object.entries(PYTHON_NATIVE.fixed).filter(([name]) => name !== "socket")),
});

/**
 * A child's own filter: exactly a cold jail's (`python-native`, or `-net`), stacked on the parent's, so
 * the intersection is never looser than a cold jail. `execve` stays, as in a cold jail: an exec
 * replaces the child with another program under the same filters, namespaces and uid (there is no
 * shell in the jail to run), and cannot add a process.
 */
function childOf(profile: SeccompProfile, name: string): SeccompProfile {
  return Object.freeze({ name, allow: profile.allow, rules: profile.rules, fixed: profile.fixed });
}

export const PYTHON_NATIVE_CHILD = childOf(PYTHON_NATIVE, "python-native-child");
export const PYTHON_NATIVE_CHILD_NET = childOf(PYTHON_NATIVE_NET, "python-native-child-net");
