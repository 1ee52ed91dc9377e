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
//   env: { FOO: "bar" },                     // on top of PATH, HOME (= workDir), LANG=C.UTF-8; nothing is inherited
// });
// jail.child.stdin.write(…); jail.child.stdout.on("data", …);   // stdio pipes are the only channel
// jail.memoryMechanism;                       // "cgroup" | "rlimit" | "none": which memory cap is in force
// const { code, signal, timedOut, oomKilled, peakMemoryBytes } = await jail.exited;
// jail.kill();                                // SIGKILL everything, idempotent; disposal does the same
// ```
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
export { doctor, type DoctorReport, type LayerStatus } from "./doctor.ts";
export { cgroupSupport, sharedLibraries, type HostTools } from "./host.ts";
export { NODE_PYODIDE, PROFILES, PYTHON_NATIVE, type SeccompProfileName } from "./profiles.ts";
export { compileProfile, disassemble, encodeFilter, type SeccompProfile } from "./seccomp.ts";
export { jailArgv, seccompFilter, spawnJailed, type JailExit, type JailRlimits, type JailSpec, type JailedProcess, type MemoryMechanism } from "./spawn.ts";
export type { Bind } from "./bwrap.ts";
