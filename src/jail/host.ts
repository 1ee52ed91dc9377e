// What the host offers the jail: tools on disk, privileges, user namespaces, cgroups, and the shared
// libraries an executable needs. Probed once and cached; every probe is a real check on this machine
// (a file that exists, a directory we can create), never an assumption from the platform name.

import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, resolve } from "node:path";

/** Host programs the jail runs. Absolute paths: the launcher's environment is empty. */
export interface HostTools {
  bwrap: string;
  setpriv: string;
  prlimit: string;
  /**
   * bash, the launcher's first step: it joins the cgroups and closes every inherited descriptor the
   * jail is not meant to have before exec'ing the rest (bash, not sh: dash cannot name fds above 9).
   */
  bash: string;
  ldd: string;
}

export const DEFAULT_TOOLS: Readonly<HostTools> = Object.freeze({
  bwrap: "/usr/bin/bwrap",
  setpriv: "/usr/bin/setpriv",
  prlimit: "/usr/bin/prlimit",
  bash: "/bin/bash",
  ldd: "/usr/bin/ldd",
});

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function isRoot(): boolean {
  return typeof process.getuid === "function" && process.getuid() === 0;
}

/** `/proc/sys/user/max_user_namespaces`, or undefined when the file is absent (old kernel, not Linux). */
export function maxUserNamespaces(): number | undefined {
  try {
    return Number(readFileSync("/proc/sys/user/max_user_namespaces", "utf8").trim());
  } catch {
    return undefined;
  }
}

/** The kernel supports seccomp filters (`Seccomp:` appears in /proc/self/status). */
export function kernelHasSeccomp(): boolean {
  try {
    return /^Seccomp:\s*\d/m.test(readFileSync("/proc/self/status", "utf8"));
  } catch {
    return false;
  }
}

const lddCache = new Map<string, readonly string[]>();

/**
 * The shared libraries `executable` loads at start (its ELF interpreter included), as host paths.
 * Runs `ldd` once per executable. Libraries a program `dlopen`s later are not listed: bind their
 * directories yourself.
 */
export function sharedLibraries(executable: string, ldd = DEFAULT_TOOLS.ldd): readonly string[] {
  const key = `${ldd}\0${executable}`;
  const hit = lddCache.get(key);
  if (hit) return hit;
  const out = spawnSync(ldd, [executable], { encoding: "utf8", env: {}, timeout: 10_000 });
  if (out.status !== 0) throw new Error(`ldd ${executable} failed: ${(out.stderr || out.error?.message || "").trim()}`);
  const libs = new Set<string>();
  for (const line of out.stdout.split("\n")) {
    // "libm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
    const m = /(?:=>\s*)?(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (m?.[1]) libs.add(m[1]);
  }
  const list = Object.freeze([...libs]);
  lddCache.set(key, list);
  return list;
}

/**
 * Where to make a host directory a jail binds (a scratch, a proxy's socket directory): the TMPDIR, or
 * /var/tmp (world-searchable, sticky) when the jail's dropped uid cannot reach the TMPDIR (a private
 * `mktemp -d`, 0700). After the uid drop bubblewrap runs as that uid and can only bind what it sees.
 */
export function jailScratchParent(drop: { uid: number; gid: number } | undefined): string {
  return drop && !readableBy(tmpdir(), drop.uid, drop.gid).ok ? "/var/tmp" : tmpdir();
}

/**
 * Whether `uid`/`gid` (no supplementary groups: we clear them) can reach and read `path`: execute
 * permission on every parent directory, read on the path itself (read + execute for a directory).
 * After the uid drop, bubblewrap runs as that uid and can only bind what it can see.
 */
export function readableBy(path: string, uid: number, gid: number): { ok: true } | { ok: false; reason: string } {
  const full = resolve(path);
  const mayAccess = (p: string, bits: number): boolean => {
    const st = statSync(p);
    const mode = st.mode;
    const cls = st.uid === uid ? (mode >> 6) & 7 : st.gid === gid ? (mode >> 3) & 7 : mode & 7;
    return (cls & bits) === bits;
  };
  try {
    const parents: string[] = [];
    for (let d = dirname(full); ; d = dirname(d)) {
      parents.unshift(d);
      if (d === dirname(d)) break;
    }
    for (const d of parents) {
      if (!mayAccess(d, 1)) return { ok: false, reason: `directory ${d} is not searchable (x) by uid ${uid}` };
    }
    const isDir = statSync(full).isDirectory();
    if (!mayAccess(full, isDir ? 5 : 4)) return { ok: false, reason: `${full} is not readable by uid ${uid}` };
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `${full}: ${(error as Error).message}` };
  }
}

/** Where this process sits in a cgroup v1 hierarchy (`/proc/self/cgroup` line `N:memory:/path`). */
function ownCgroupPath(controller: string): string | undefined {
  try {
    for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
      const [, controllers, path] = line.split(":");
      if (controllers?.split(",").includes(controller) && path !== undefined) return path;
    }
  } catch {
    // not Linux, or /proc not mounted
  }
  return undefined;
}

export interface CgroupSupport {
  /** Directory new memory cgroups are made under (inside our own, so the host's accounting stays intact). */
  memoryParent?: string;
  /** Same for the pids controller. */
  pidsParent?: string;
  /** Why a controller is unavailable. */
  reason?: string;
}

let cgroupCache: CgroupSupport | undefined;

/**
 * cgroup v1 memory/pids controllers we may create children in: root only (nobody delegated us a
 * subtree), and only when a test child can really be made and removed. Cached for the process.
 */
export function cgroupSupport(): CgroupSupport {
  if (cgroupCache) return cgroupCache;
  cgroupCache = probeCgroups();
  return cgroupCache;
}

/**
 * Removes empty jail cgroups left by a host process that died before it could clean up (a crash or
 * SIGKILL of the host: `--die-with-parent` ends the jail, but nobody rmdirs its cgroup).
 */
function removeStaleCgroups(parent: string): void {
  for (const name of readdirSync(parent)) {
    const owner = /^wasmcell-(\d+)-\d+$/.exec(name)?.[1];
    if (!owner || isAlive(Number(owner))) continue;
    try {
      rmdirSync(`${parent}/${name}`);
    } catch {
      // still has processes (they are dying), or already gone
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function probeCgroups(): CgroupSupport {
  if (process.platform !== "linux") return { reason: "cgroups exist on Linux only" };
  if (!isRoot()) return { reason: "creating a cgroup needs root here (no delegated subtree)" };
  const out: CgroupSupport = {};
  const reasons: string[] = [];
  for (const controller of ["memory", "pids"] as const) {
    const own = ownCgroupPath(controller);
    if (own === undefined) {
      reasons.push(`no cgroup v1 "${controller}" controller in /proc/self/cgroup`);
      continue;
    }
    const parent = `/sys/fs/cgroup/${controller}${own === "/" ? "" : own}`;
    const probe = `${parent}/wasmcell-probe-${process.pid}`;
    try {
      mkdirSync(probe);
      rmdirSync(probe);
      if (controller === "memory") out.memoryParent = parent;
      else out.pidsParent = parent;
      removeStaleCgroups(parent);
    } catch (error) {
      reasons.push(`cannot create a ${controller} cgroup under ${parent}: ${(error as Error).message}`);
    }
  }
  if (reasons.length) out.reason = reasons.join("; ");
  return out;
}
