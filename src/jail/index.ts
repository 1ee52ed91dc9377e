// The jail: one host program, sealed. Shared by the Pyodide sidecar and the native python3 tier.
//
// ## Usage
//
// ```ts
// import { spawnJailed, checkSeal } from "../../jail/index.ts";
//
// await checkSeal(options.seal);             // throws SealUnavailableError naming a missing layer
// await using jail = await spawnJailed({
//   executable: process.execPath,            // host path; bound read-only with its `ldd` libraries
//   jailExecutable: "/sandbox/bin/node",      // where it appears inside (default: same path)
//   args: ["--permission", "--allow-fs-read=/sandbox/", "/sandbox/sidecar.mjs"],
//   roBinds: [{ host: pyodideDir, jail: "/sandbox/pyodide" }, { host: sidecarFile, jail: "/sandbox/sidecar.mjs" }],
//   seccompProfile: "node-pyodide",          // or "python-native", or a SeccompProfile object
//   seal: options.seal,                      // ResolvedSeal: bubblewrap, seccomp ("enforce" | "kill" | false), dropPrivileges
//   scratchMb: 64,                           // writable tmpfs at scratchDir (default /tmp), cwd = workDir
//   rlimits: { cpuSeconds: 30, fileSizeBytes: 16 << 20, openFiles: 64 },
//   memoryBytes: 512 << 20,                  // cgroup v1 when root; else RLIMIT_AS = memoryFallbackAddressSpaceBytes ?? memoryBytes
//   memoryFallbackAddressSpaceBytes: 4 << 30, // node: pass --disable-wasm-trap-handler when this can apply
//   wallClockMs: 10_000,                     // SIGKILL of the whole jail when it passes
//   env: { FOO: "bar" },                     // on top of PATH, HOME (= workDir), LANG/LC_ALL=C.UTF-8, TZ=UTC; nothing inherited
// });
// jail.child.stdin.write(…); jail.child.stdout.on("data", …);   // stdio pipes to the program
// jail.pipes;                                  // `extraPipes: n` more pipes, at fds 4, 5, … in the program
// jail.memoryMechanism;                        // "cgroup" | "rlimit" | "none": which memory cap is in force
// jail.plan;                                   // the layers in force: { bubblewrap, seccomp, uidDrop }
// jail.setDeadline(5_000);                     // (re)arm the wall-clock kill, e.g. when a pre-started process gets work
// jail.setDeadline(undefined);                 // disarm it (a long-lived process between requests)
// jail.memoryStats();                          // { peakMemoryBytes?, oomKilled } so far (cgroup only)
// const { code, signal, timedOut, oomKilled, peakMemoryBytes } = await jail.exited;   // never rejects
// jail.kill();                                 // SIGKILL everything, idempotent; disposal does the same
//
// Other spec fields: `inheritFiles` ([fd]: host descriptors of read-only regular files, at the fds after
// the extra pipes), `symlinks` ([{ target: "usr/lib", jail: "/lib" }]), `bindSharedLibraries` (default
// true: bind what `ldd` lists; off when whole library directories are bound), `proc` (default false),
// `scratchDir` (default /tmp) and `workDir` (default: the scratch), `pidsMax` (cgroup, default 64).
// ```
//
// Host paths bound into the jail must be readable by the dropped uid (every parent directory searchable):
// bubblewrap runs as that uid. Binding through descriptors opened as root would get around it, but a
// descriptor of a host directory that reached the program would let it walk out of its mounts, so an
// unreadable path is a SealUnavailableError naming it instead.
//
// ## The layers (each can be turned off in `seal`; one asked for and unavailable is an error)
//
// - **bubblewrap**: new user/pid/net/ipc/uts/cgroup/mount namespaces, `--disable-userns` (no nested
//   namespaces), a read-only root holding only the program, its libraries and `roBinds`, `/dev`, a
//   size-capped tmpfs scratch, `--clearenv`, `--new-session`, `--die-with-parent`, `--cap-drop ALL`,
//   hostname `sandbox`. No `/proc` unless `proc: true`.
// - **seccomp**: a classic-BPF allowlist compiled here (seccomp.ts, profiles.ts), installed by bwrap
//   from fd 3. `"enforce"` answers unlisted syscalls with EPERM; `"kill"` kills the process (tests).
// - **uid drop**: when the host is root, `setpriv --reuid/--regid --clear-groups --no-new-privs`
//   before bwrap, so the kernel uid in the jail is not 0 (`bwrap --uid` alone only renames it).
//   Every bound path must then be readable by that uid; if not, SealUnavailableError("dropPrivileges").
// - **resources** (not seal layers: they always apply): rlimits via `prlimit` (soft = hard; core 0;
//   nofile 64 unless given), memory via cgroup v1 (root) or RLIMIT_AS, pids.max via cgroup, and the
//   wall-clock kill. `--die-with-parent` is the backstop if the host dies.
//
// With `seal.bubblewrap` false the program runs unjailed from a private host temp directory (still
// with rlimits, cgroup and uid drop); seccomp then cannot be installed and must be off too.

export { checkSeal, type SealPlan } from "./check.ts";
export { nodePermissionStatus, sealReport, type LayerStatus, type SealReport } from "./doctor.ts";
export { cgroupSupport, isExecutable, isRoot, jailScratchParent, sharedLibraries, type HostTools } from "./host.ts";
export { stagingStatus, type StagedPath, type StagingStatus } from "./stage-status.ts";
export type { StageStore } from "./stage-store.ts";
// For the other shared store a process holds entries of (the cache, src/library/cache.ts).
export { isAlive, startTime, treeBytes } from "./stage-store.ts";
export { NODE_PYODIDE, PROFILES, PYTHON_NATIVE, PYTHON_NATIVE_NET, type SeccompProfileName } from "./profiles.ts";
export { PYTHON_NATIVE_CHILD, PYTHON_NATIVE_CHILD_NET, PYTHON_NATIVE_PARENT } from "./profiles-warm.ts";
export type { JailCgroup } from "./cgroup.ts";
export { compileProfile, disassemble, encodeFilter, type SeccompProfile } from "./seccomp.ts";
export {
  jailArgv,
  seccompFilter,
  SIGNALS_BY_NUMBER,
  spawnJailed,
  type JailExit,
  type JailRlimits,
  type JailSpec,
  type JailedProcess,
  type MemoryMechanism,
} from "./spawn.ts";
export type { Bind } from "./bwrap.ts";
