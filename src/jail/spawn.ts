// spawnJailed: one program in the jail, with every layer the seal asks for, and a handle that can
// kill the whole jail. See index.ts for the API contract.
//
// The command chain, outside in (each link `exec`s the next, so it is one pid throughout):
//   bash -c LAUNCHER: join the memory/pids cgroups (root), close inherited descriptors   always
//   prlimit --cpu --fsize --nofile --core [--as]                                       rlimits (soft = hard)
//   [setpriv --reuid --regid --clear-groups --no-new-privs]                           root + dropPrivileges
//   bwrap … --seccomp 3 -- program args                                                namespaces + filter
// Order matters: the cgroup join and the rlimits need root's rights over the new process, so they
// come before the uid drop; bwrap must run as the dropped uid (so the kernel uid in the jail is not 0,
// docs/seal.md pitfall 10); the filter is installed by bwrap last, right before the program starts.
// The chain runs with an empty environment: bwrap's pid-1 reaper keeps the environment it was given,
// and a guest with /proc could read it.

import { spawn, type ChildProcessByStdio } from "node:child_process";
import { chownSync, fstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import type { Duplex, Readable, Writable } from "node:stream";
import { SealUnavailableError } from "../core/errors.ts";
import type { ResolvedSeal } from "../options/index.ts";
import { bwrapArgs, type Bind } from "./bwrap.ts";
import { JailCgroup, type CgroupStats } from "./cgroup.ts";
import { checkSeal, type SealPlan } from "./check.ts";
import {
  cgroupSupport,
  DEFAULT_TOOLS,
  jailScratchParent,
  readableBy,
  sharedLibraries,
  type HostTools,
} from "./host.ts";
import { isRuntimeFile, stageReadable } from "./stage.ts";
import { PROFILES, type SeccompProfileName } from "./profiles.ts";
import { compileProfile, encodeFilter, ERRNO_EPERM, KILL, type SeccompProfile } from "./seccomp.ts";

export interface JailRlimits {
  /** RLIMIT_CPU: CPU seconds before the kernel kills the process (SIGXCPU/SIGKILL). */
  cpuSeconds?: number;
  /** RLIMIT_FSIZE: largest file the process may write (past it: EFBIG). */
  fileSizeBytes?: number;
  /** RLIMIT_NOFILE: open descriptors. Node + Pyodide need at least 24. Default 64. */
  openFiles?: number;
  /** RLIMIT_AS: virtual address space. Applied as given, whatever the memory mechanism. */
  addressSpaceBytes?: number;
}

export interface JailSpec {
  /** The program, as a host path. It is bound read-only into the jail, with the libraries `ldd` lists. */
  executable: string;
  /** Where the program appears inside the jail (default: the same path). */
  jailExecutable?: string;
  args?: readonly string[];
  /**
   * Bind the libraries `ldd` lists for the executable at their host paths (default true). Turn it off
   * when `roBinds` already carry whole library directories (the native tier binds /usr/lib/…).
   */
  bindSharedLibraries?: boolean;
  /** Extra read-only binds (directories or files). Each host path must exist. */
  roBinds?: readonly Bind[];
  /** Symlinks to create in the jail (`{ target: "usr/lib", jail: "/lib" }`). */
  symlinks?: readonly { target: string; jail: string }[];
  /** Which syscall allowlist to install (ignored when `seal.seccomp` is false). */
  seccompProfile: SeccompProfileName | SeccompProfile;
  seal: ResolvedSeal;
  /** Size of the writable tmpfs scratch, in MiB (default 64). */
  scratchMb?: number;
  /** Mount point of the scratch tmpfs (default `/tmp`). */
  scratchDir?: string;
  /** Working directory, inside the scratch (default: the scratch itself). */
  workDir?: string;
  /** Environment for the program, on top of `HOME` (= workDir), `LANG`/`LC_ALL=C.UTF-8`, `TZ=UTC`, `PATH=/usr/bin:/bin`. */
  env?: Readonly<Record<string, string>>;
  /** Mount a /proc for the jail's own pid namespace (default false: nothing we run needs it). */
  proc?: boolean;
  rlimits?: JailRlimits;
  /**
   * Memory cap for the whole jail. A cgroup v1 memory limit when the host can make one (root);
   * otherwise RLIMIT_AS set to `memoryFallbackAddressSpaceBytes ?? memoryBytes`. `memoryMechanism`
   * on the handle says which is in force.
   */
  memoryBytes?: number;
  /** RLIMIT_AS to use when no cgroup is available (V8 needs far more address space than RSS). */
  memoryFallbackAddressSpaceBytes?: number;
  /** cgroup pids.max (threads count too) when a cgroup is available. Default 64. */
  pidsMax?: number;
  /** Wall-clock deadline: the whole jail is SIGKILLed when it passes, and `exited` says `timedOut`. */
  wallClockMs?: number;
  /**
   * Extra pipes to the program, at fds 4, 5, … (fd 3 carries the seccomp program to bubblewrap).
   * They reach the jailed program as open descriptors: a private channel beside stdio (the native
   * tier reads its result envelope from fd 4, so guest prints cannot be mistaken for it).
   */
  extraPipes?: number;
  /**
   * Open host descriptors of regular files, passed to the program read-only at the fds after the
   * extra pipes (4 + extraPipes, …): a file the host opened and verified (the Pyodide snapshot) is
   * read by the program without a bind the dropped uid could not read or a copy through a pipe.
   * Anything but a regular file opened read-only is refused: a directory's descriptor would let the
   * program walk out of its mounts (`openat(fd, "..")`), a writable one would let it change the file.
   */
  inheritFiles?: readonly number[];
  /** Capabilities kept inside the jail's user namespace (bwrap.ts `capAdd`; the native warm parent only). */
  capAdd?: readonly string[];
  /** @internal host tool paths (tests point `bwrap` at a missing file to check the error path). */
  tools?: Partial<HostTools>;
}

export type MemoryMechanism = "cgroup" | "rlimit" | "none";

export interface JailExit {
  /** Exit code of the program (bubblewrap passes it through), or null when it died from a signal. */
  code: number | null;
  /** Signal that ended the program: our SIGKILL, the OOM killer's, SIGSYS from seccomp, SIGXCPU… */
  signal: NodeJS.Signals | null;
  /** Our wall-clock deadline fired. */
  timedOut: boolean;
  /** The cgroup's OOM killer fired. */
  oomKilled: boolean;
  /** Peak memory of the jail (cgroup only). */
  peakMemoryBytes?: number;
}

export interface JailedProcess extends AsyncDisposable {
  /** The outermost process; stdin/stdout/stderr are pipes to the jailed program. */
  readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** `spec.extraPipes` streams, for fds 4, 5, … */
  readonly pipes: readonly Duplex[];
  readonly pid: number;
  readonly memoryMechanism: MemoryMechanism;
  /** Which layers are in force. */
  readonly plan: SealPlan;
  /** The argv that was run (for `doctor` and tests). */
  readonly argv: readonly string[];
  /** SIGKILLs the whole jail now. Safe to call more than once. */
  kill(): void;
  /**
   * (Re)arms the wall-clock kill `ms` from now, replacing `spec.wallClockMs`; `undefined` disarms it.
   * A pre-started process waiting for its request gets its deadline when the request arrives; a
   * long-lived one (a Pyodide sidecar) gets one per request and none while idle.
   */
  setDeadline(ms: number | undefined): void;
  /** Resolves once the jail is gone (and its cgroup removed). Never rejects. */
  readonly exited: Promise<JailExit>;
  /** Peak memory so far and whether the OOM killer fired (cgroup only; `{ oomKilled: false }` otherwise). */
  memoryStats(): CgroupStats;
  /** The jail's processes, as host pids (cgroup only; empty otherwise). */
  hostPids(): number[];
  /**
   * A cgroup pair nested in the jail's, for one process of it (the native warm parent's children:
   * memory counted for the child alone, so the OOM killer picks in there). Undefined without a cgroup.
   */
  childCgroup(memoryBytes: number, pidsMax: number): JailCgroup | undefined;
}

/** The signals a jailed process is expected to die of, by number (an exit status of 128 + n names one). */
export const SIGNALS_BY_NUMBER: Readonly<Record<number, NodeJS.Signals>> = {
  6: "SIGABRT",
  9: "SIGKILL",
  11: "SIGSEGV",
  15: "SIGTERM",
  24: "SIGXCPU",
  25: "SIGXFSZ",
  31: "SIGSYS",
};

/**
 * The first link of the chain, as bash: `$1` the descriptors to keep, `$2` how many cgroup.procs files
 * follow, then those files, then the command. It joins the cgroups (so nothing runs outside them) and
 * closes every other descriptor: Node passes on whatever its own parent left open without
 * close-on-exec (a socket-activation fd, a pipe, a directory), and inside the jail such a descriptor
 * would be a way out (a host socket, or `openat(dirfd, "..")` past the mounts).
 */
const LAUNCHER = [
  'keep=" $1 "; n=$2; shift 2',
  'for ((i = 0; i < n; i++)); do echo $$ > "$1" || exit 121; shift; done',
  'for f in /proc/self/fd/*; do fd=${f##*/}; case "$keep" in *" $fd "*) ;; *) { exec {fd}>&-; } 2>/dev/null ;; esac; done',
  'exec "$@"',
].join("\n");

const filterCache = new Map<string, Buffer>();

/** The compiled filter for a profile and mode (cached: the program for a profile never changes). */
export function seccompFilter(profile: SeccompProfileName | SeccompProfile, mode: "enforce" | "kill"): Buffer {
  const p = typeof profile === "string" ? PROFILES[profile] : profile;
  const key = typeof profile === "string" ? `${profile}:${mode}` : undefined;
  const hit = key ? filterCache.get(key) : undefined;
  if (hit) return hit;
  const buf = encodeFilter(compileProfile(p, mode === "kill" ? KILL : ERRNO_EPERM));
  if (key) filterCache.set(key, buf);
  return buf;
}

// Paths already found readable (only successes are cached: a fixed permission must be seen at once).
const readableCache = new Set<string>();

function assertReadable(path: string, uid: number, gid: number): void {
  const key = `${uid}:${gid}:${path}`;
  if (readableCache.has(key)) return;
  const r = readableBy(path, uid, gid);
  const problem = r.ok ? undefined : r.reason;
  if (!problem) readableCache.add(key);
  if (problem) {
    throw new SealUnavailableError(
      "dropPrivileges",
      `the jail runs as uid ${uid} and cannot bind ${path}: ${problem}. Make it readable by that uid or set seal.dropPrivileges to one that can read it`,
    );
  }
}

/**
 * Builds the whole command chain. Pure apart from reading the host (ldd, permissions), so tests can
 * look at the exact argv.
 */
export function jailArgv(
  spec: JailSpec,
  plan: SealPlan,
  cgroupProcs: readonly string[],
  memory: { mechanism: MemoryMechanism; rlimitAs?: number },
  hostScratch?: string,
): string[] {
  const t = { ...DEFAULT_TOOLS, ...spec.tools };
  // The descriptors the jail may keep: stdio, the seccomp program (3) and the extra pipes (4, 5, …).
  const keep = [
    0,
    1,
    2,
    ...(plan.seccomp !== false ? [3] : []),
    ...Array.from({ length: (spec.extraPipes ?? 0) + (spec.inheritFiles?.length ?? 0) }, (_, i) => 4 + i),
  ];
  const argv: string[] = [];
  // Off Linux (possible only with every seal layer turned off) there is no launcher, prlimit or
  // cgroup: the program just runs, with the wall-clock kill as its only limit.
  if (process.platform === "linux") {
    // --norc: bash would otherwise source ~/.bashrc, taking stdin (a socketpair) for a remote shell's.
    argv.push(
      t.bash,
      "--norc",
      "--noprofile",
      "-c",
      LAUNCHER,
      "wasmcell-jail",
      keep.join(" "),
      String(cgroupProcs.length),
      ...cgroupProcs,
    );
    const r = spec.rlimits ?? {};
    const lim = (flag: string, v: number) => `--${flag}=${Math.floor(v)}:${Math.floor(v)}`;
    argv.push(t.prlimit, lim("core", 0), lim("nofile", r.openFiles ?? 64));
    if (r.cpuSeconds !== undefined) argv.push(lim("cpu", Math.max(1, Math.ceil(r.cpuSeconds))));
    if (r.fileSizeBytes !== undefined) argv.push(lim("fsize", r.fileSizeBytes));
    const as = Math.min(r.addressSpaceBytes ?? Infinity, memory.rlimitAs ?? Infinity);
    if (Number.isFinite(as)) argv.push(lim("as", as));
    argv.push("--");
  }
  if (plan.uidDrop) {
    argv.push(
      t.setpriv,
      `--reuid=${plan.uidDrop.uid}`,
      `--regid=${plan.uidDrop.gid}`,
      "--clear-groups",
      "--no-new-privs",
      "--",
    );
  }
  const scratchDir = spec.scratchDir ?? "/tmp";
  const workDir = spec.workDir ?? scratchDir;
  // The box's clock and locale, whatever the host's: TZ and LC_ALL are set, never inherited, so
  // neither /etc/localtime nor a locale default tells the program where the host runs.
  const env = { PATH: "/usr/bin:/bin", LANG: "C.UTF-8", LC_ALL: "C.UTF-8", TZ: "UTC", HOME: workDir, ...spec.env };
  if (!plan.bubblewrap) {
    // No mount namespace: the program runs on the host, from a private temp directory standing in for
    // the scratch. Jail paths in args and env are translated to the host paths they would be bound from.
    // The most specific jail path wins, as a deeper bind mount would: a bind at /tmp/repo/x must not
    // be read as "inside the /tmp scratch" (a checkout under /tmp would otherwise break).
    // Under the uid drop the program reads the package's runtime files where they are installed; one
    // the drop uid cannot reach there (a 0700 parent) is read from a staged copy, as a bind would be.
    const drop = plan.uidDrop;
    const hostOf = (b: Bind): string =>
      drop && !readableBy(b.host, drop.uid, drop.gid).ok && isRuntimeFile(b.host) ? stageReadable(b.host) : b.host;
    const map: [string, string][] = [
      [scratchDir, hostScratch ?? scratchDir],
      ...(spec.roBinds ?? []).map((b): [string, string] => [b.jail, hostOf(b)]),
    ];
    map.sort(([a], [b]) => b.length - a.length);
    const translate = (v: string) => {
      for (const [jail, host] of map) if (v === jail || v.startsWith(`${jail}/`)) return host + v.slice(jail.length);
      return v;
    };
    const hostEnv = Object.entries(env).map(([k, v]) => `${k}=${translate(v)}`);
    const executable = hostOf({ host: spec.executable, jail: spec.executable });
    argv.push("/usr/bin/env", "-i", ...hostEnv, executable, ...(spec.args ?? []).map(translate));
    return argv;
  }
  const program = spec.jailExecutable ?? spec.executable;
  const binds: Bind[] = [];
  const seen = new Set<string>();
  const add = (b: Bind) => {
    if (seen.has(b.jail)) return;
    seen.add(b.jail);
    binds.push(b);
  };
  if (spec.bindSharedLibraries ?? true)
    for (const lib of sharedLibraries(spec.executable, t.ldd)) add({ host: lib, jail: lib });
  add({ host: spec.executable, jail: program });
  for (const b of spec.roBinds ?? []) add(b);
  if (plan.uidDrop) {
    const { uid, gid } = plan.uidDrop;
    // The package's own runtime files that the drop uid cannot reach where they are installed (a 0700
    // parent) are bound from a staged copy; any other unreachable bind is refused below.
    for (const [i, b] of binds.entries()) {
      if (!readableBy(b.host, uid, gid).ok && isRuntimeFile(b.host))
        binds[i] = { host: stageReadable(b.host), jail: b.jail };
      assertReadable(binds[i]!.host, uid, gid);
    }
  }
  const input = {
    program,
    args: spec.args ?? [],
    roBinds: binds,
    symlinks: spec.symlinks ?? [],
    scratchDir,
    scratchBytes: (spec.scratchMb ?? 64) * 1024 * 1024,
    workDir,
    env,
    proc: spec.proc ?? false,
    ...(spec.capAdd?.length ? { capAdd: spec.capAdd } : {}),
  };
  argv.push(t.bwrap, ...bwrapArgs(plan.seccomp !== false ? { ...input, seccompFd: 3 } : input));
  return argv;
}

/** Why `fd` may not be passed into a jail (not a regular file, or open for writing), or undefined. */
function notReadOnlyFile(fd: number): string | undefined {
  if (!fstatSync(fd).isFile()) return "is not a regular file";
  if (process.platform !== "linux") return undefined;
  // The access mode is the low two bits of the octal `flags:` line (O_RDONLY = 0).
  const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
  return flags !== undefined && (parseInt(flags, 8) & 3) === 0 ? undefined : "is not open read-only";
}

/**
 * Starts `spec.executable` in the jail. Checks the seal first (throws SealUnavailableError for a
 * layer that was asked for and cannot be set up).
 */
export async function spawnJailed(spec: JailSpec): Promise<JailedProcess> {
  const plan = await checkSeal(spec.seal, spec.tools);
  const support = cgroupSupport();
  let cgroup: JailCgroup | undefined;
  let mechanism: MemoryMechanism = "none";
  let rlimitAs: number | undefined;
  if (spec.memoryBytes !== undefined) {
    if (support.memoryParent) {
      cgroup = JailCgroup.create(support, spec.memoryBytes, spec.pidsMax ?? 64);
      mechanism = "cgroup";
    } else {
      rlimitAs = spec.memoryFallbackAddressSpaceBytes ?? spec.memoryBytes;
      mechanism = "rlimit";
    }
  } else if (support.pidsParent) {
    cgroup = JailCgroup.create(support, undefined, spec.pidsMax ?? 64);
  }
  if (mechanism !== "cgroup" && spec.rlimits?.addressSpaceBytes !== undefined) mechanism = "rlimit";
  if (process.platform !== "linux") mechanism = "none";

  // Without bubblewrap there is no private scratch: give the program a fresh host directory it owns.
  let hostScratch: string | undefined;
  let hostWorkDir: string | undefined;
  let argv: string[];
  try {
    if (!plan.bubblewrap) {
      // Under the uid drop the scratch must be reachable by that uid: a private TMPDIR (mktemp -d, 0700)
      // is not, so the scratch then goes to /var/tmp (world-searchable, sticky) instead.
      hostScratch = mkdtempSync(`${jailScratchParent(plan.uidDrop || undefined)}/wasmcell-`);
      const scratchDir = spec.scratchDir ?? "/tmp";
      hostWorkDir = hostScratch + (spec.workDir ?? scratchDir).slice(scratchDir.length);
      mkdirSync(hostWorkDir, { recursive: true });
      if (plan.uidDrop)
        for (const d of new Set([hostScratch, hostWorkDir])) chownSync(d, plan.uidDrop.uid, plan.uidDrop.gid);
    }
    argv = jailArgv(
      spec,
      plan,
      cgroup?.procsFiles ?? [],
      rlimitAs === undefined ? { mechanism } : { mechanism, rlimitAs },
      hostScratch,
    );
  } catch (error) {
    await cgroup?.remove();
    if (hostScratch) rmSync(hostScratch, { recursive: true, force: true });
    throw error;
  }

  for (const fd of spec.inheritFiles ?? []) {
    const problem = notReadOnlyFile(fd);
    if (problem) {
      await cgroup?.remove();
      if (hostScratch) rmSync(hostScratch, { recursive: true, force: true });
      throw new TypeError(`inheritFiles: descriptor ${fd} ${problem}`);
    }
  }
  const filter = plan.seccomp !== false ? seccompFilter(spec.seccompProfile, plan.seccomp) : undefined;
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: [
      "pipe",
      "pipe",
      "pipe",
      filter ? "pipe" : "ignore",
      ...Array.from({ length: spec.extraPipes ?? 0 }, () => "pipe" as const),
      ...(spec.inheritFiles ?? []),
    ],
    env: {},
    // Its own process group, so kill() reaches every link of the chain; bwrap's --new-session then
    // puts the program in a session of its own.
    detached: true,
    ...(hostWorkDir ? { cwd: hostWorkDir } : {}),
  }) as ChildProcessByStdio<Writable, Readable, Readable>;
  if (filter) {
    // bwrap reads the program to EOF while parsing its options; 8 bytes an instruction, well under a pipe buffer.
    const fd3 = child.stdio[3] as Writable;
    fd3.on("error", () => undefined);
    fd3.end(filter);
  }
  // A jail that dies early must not crash the host with EPIPE on a write.
  child.stdin.on("error", () => undefined);

  let timedOut = false;
  let killed = false;
  const kill = () => {
    killed = true;
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is gone
      }
    }
    cgroup?.killAll();
  };
  let timer: NodeJS.Timeout | undefined;
  let ended = false;
  const setDeadline = (ms: number | undefined) => {
    if (ended) return;
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (ms === undefined) return;
    timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, ms);
  };
  if (spec.wallClockMs !== undefined) setDeadline(spec.wallClockMs);

  const exited = new Promise<JailExit>((resolve) => {
    let done = false;
    const finish = async (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      ended = true;
      if (timer) clearTimeout(timer);
      const stats = cgroup?.stats() ?? { oomKilled: false };
      // Clean-up that fails must not keep the exit from being told: every engine waits on `exited`.
      // A cgroup or scratch directory that cannot be removed is left for the OS (both are empty: the
      // jail's processes are gone).
      await cgroup?.remove().catch(() => undefined);
      try {
        if (hostScratch) rmSync(hostScratch, { recursive: true, force: true });
      } catch {
        // as above
      }
      // bubblewrap reports a program killed by signal N as exit code 128 + N.
      let sig = signal;
      let c = code;
      if (plan.bubblewrap && c !== null && c > 128 && c < 160) {
        sig = SIGNALS_BY_NUMBER[c - 128] ?? sig;
        if (SIGNALS_BY_NUMBER[c - 128]) c = null;
      }
      const out: JailExit = { code: c, signal: sig, timedOut, oomKilled: stats.oomKilled };
      if (stats.peakMemoryBytes !== undefined) out.peakMemoryBytes = stats.peakMemoryBytes;
      resolve(out);
    };
    // finish cannot reject (its clean-up catches); the handler is there so that a future change that
    // makes it throw still resolves the exit rather than ending the host process.
    const end = (code: number | null, signal: NodeJS.Signals | null): void => {
      finish(code, signal).catch(() => resolve({ code, signal, timedOut, oomKilled: false }));
    };
    child.once("exit", (code, signal) => {
      end(code, signal);
    });
    child.once("error", () => {
      end(null, killed ? "SIGKILL" : null);
    });
  });

  const pipes = Array.from({ length: spec.extraPipes ?? 0 }, (_, i) => {
    const pipe = child.stdio[4 + i] as Duplex;
    pipe.on("error", () => undefined);
    return pipe;
  });
  return {
    child,
    pipes,
    pid: child.pid ?? -1,
    memoryMechanism: mechanism,
    plan,
    argv,
    kill,
    setDeadline,
    exited,
    memoryStats: () => cgroup?.stats() ?? { oomKilled: false },
    hostPids: () => cgroup?.pids() ?? [],
    childCgroup: (memoryBytes, pidsMax) => cgroup?.child(memoryBytes, pidsMax),
    async [Symbol.asyncDispose]() {
      kill();
      await exited;
    },
  };
}
