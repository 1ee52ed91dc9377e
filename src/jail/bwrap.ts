// The bubblewrap command line. A pure function of its inputs so tests can read the exact argv.
//
// What the jailed process gets:
// - new user, pid, net, ipc, uts, cgroup and mount namespaces (`--unshare-all`, plus `--unshare-user`
//   so the user namespace is made even as root, which `--disable-userns` needs: no nested namespaces);
// - a root that is an empty read-only tmpfs holding only the read-only binds listed (the program, its
//   shared libraries, whatever the caller adds), a read-only `/dev` (null, zero, urandom, …; no host
//   devices) and, only if asked, a `/proc` for its own pid namespace;
// - one writable, size-capped tmpfs scratch (`--size N --tmpfs`), with the working directory in it;
// - an empty environment plus the few variables named here (`--clearenv`);
// - no capabilities, its own session (no TIOCSTI into our terminal), hostname `sandbox`, and death
//   when its parent dies;
// - a seccomp filter read from a file descriptor, installed just before the program is exec'd.
// What it does not stop by itself: syscalls (that is seccomp's job) and resource use (rlimits, cgroup).

export interface Bind {
  /** Path on the host. */
  host: string;
  /** Where it appears in the jail. */
  jail: string;
}

export interface BwrapInput {
  /** The program, as the jail sees it. */
  program: string;
  args: readonly string[];
  roBinds: readonly Bind[];
  symlinks: readonly { target: string; jail: string }[];
  /** Mount point of the writable tmpfs. */
  scratchDir: string;
  scratchBytes: number;
  /** Directory (inside the scratch) the program starts in; created if missing. */
  workDir: string;
  env: Readonly<Record<string, string>>;
  proc: boolean;
  /** fd number bwrap reads the BPF program from, or undefined for no filter. */
  seccompFd?: number;
  /**
   * Capabilities the program keeps inside the jail's own user namespace (default none). Only the
   * native tier's warm parent asks (CAP_SYS_ADMIN, CAP_NET_ADMIN: its children's mounts and loopback,
   * over namespaces the jail owns, never the host's); its children drop them before guest code.
   */
  capAdd?: readonly string[];
}

/** The namespace and privilege flags every jail gets; check.ts probes exactly these. */
export const ISOLATION_FLAGS: readonly string[] = Object.freeze([
  "--unshare-all",
  "--unshare-user",
  "--disable-userns",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
  "--clearenv",
]);

export function bwrapArgs(input: BwrapInput): string[] {
  const argv = [...ISOLATION_FLAGS, "--hostname", "sandbox"];
  for (const cap of input.capAdd ?? []) argv.push("--cap-add", cap);
  for (const bind of input.roBinds) argv.push("--ro-bind", bind.host, bind.jail);
  for (const link of input.symlinks) argv.push("--symlink", link.target, link.jail);
  // /dev is a tmpfs of bwrap's with no size cap: read-only, so it cannot hold a guest's files (device
  // nodes such as /dev/null stay writable: a read-only mount does not affect writes to devices).
  argv.push("--dev", "/dev", "--remount-ro", "/dev");
  if (input.proc) argv.push("--proc", "/proc");
  argv.push("--size", String(input.scratchBytes), "--tmpfs", input.scratchDir);
  if (input.workDir !== input.scratchDir) argv.push("--dir", input.workDir);
  argv.push("--remount-ro", "/");
  for (const [key, value] of Object.entries(input.env)) argv.push("--setenv", key, value);
  argv.push("--chdir", input.workDir);
  if (input.seccompFd !== undefined) argv.push("--seccomp", String(input.seccompFd));
  argv.push("--", input.program, ...input.args);
  return argv;
}
