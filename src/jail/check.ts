// Can the seal the caller asked for be set up here? A layer that was asked for and cannot be set up
// is a SealUnavailableError naming it; a layer the caller turned off is simply not used. There is no
// silent downgrade anywhere on this path.

import { execFile } from "node:child_process";
import { SealUnavailableError } from "../core/errors.ts";
import type { ResolvedSeal } from "../options/index.ts";
import { DEFAULT_TOOLS, isExecutable, isRoot, kernelHasSeccomp, maxUserNamespaces, type HostTools } from "./host.ts";
import { ISOLATION_FLAGS } from "./bwrap.ts";

/** The layers that will really be in force for a spawn with this seal on this host. */
export interface SealPlan {
  bubblewrap: boolean;
  seccomp: "enforce" | "kill" | false;
  /** The uid/gid the jail runs as after the drop, or false when no drop happens (not root, or turned off). */
  uidDrop: { uid: number; gid: number } | false;
}

const probeCache = new Map<string, Promise<string | undefined>>();

/**
 * Checks every layer `seal` asks for and returns the plan. Throws SealUnavailableError naming the
 * first layer that cannot be set up (bubblewrap missing, user namespaces off, not Linux, not x86_64
 * for the filter compiler, setpriv missing for the uid drop).
 */
export async function checkSeal(seal: ResolvedSeal, tools: Partial<HostTools> = {}): Promise<SealPlan> {
  const t = { ...DEFAULT_TOOLS, ...tools };
  const asked = seal.bubblewrap || seal.seccomp !== false || (seal.dropPrivileges !== false && isRoot());
  if (asked && process.platform !== "linux") {
    const layer = seal.bubblewrap ? "bubblewrap" : seal.seccomp !== false ? "seccomp" : "dropPrivileges";
    throw new SealUnavailableError(
      layer,
      `it needs Linux; this is ${process.platform}. Turn the layer off in seal options to run without it`,
    );
  }
  if (process.platform === "linux" && !isExecutable(t.bash)) {
    throw new SealUnavailableError(
      "launcher",
      `${t.bash} is missing: the jail's launcher needs it to join cgroups and close inherited descriptors`,
    );
  }
  const uidDrop = seal.dropPrivileges !== false && isRoot() ? seal.dropPrivileges : false;
  if (uidDrop && !isExecutable(t.setpriv)) {
    throw new SealUnavailableError(
      "dropPrivileges",
      `the host runs as root and ${t.setpriv} (util-linux) is not installed to drop to uid ${uidDrop.uid}`,
    );
  }
  if (seal.bubblewrap) {
    if (!isExecutable(t.bwrap)) {
      throw new SealUnavailableError(
        "bubblewrap",
        `${t.bwrap} is not installed (Debian/Ubuntu: apt-get install bubblewrap)`,
      );
    }
    const userns = maxUserNamespaces();
    if (userns === 0) {
      throw new SealUnavailableError(
        "bubblewrap",
        "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)",
      );
    }
    const failure = await probeBwrap(t, uidDrop);
    if (failure) throw new SealUnavailableError("bubblewrap", `a test sandbox failed to start: ${failure}`);
  }
  if (seal.seccomp !== false) {
    if (process.arch !== "x64") {
      throw new SealUnavailableError("seccomp", `the filter compiler targets x86_64; this is ${process.arch}`);
    }
    if (!kernelHasSeccomp())
      throw new SealUnavailableError(
        "seccomp",
        "the kernel has no seccomp support (no Seccomp: line in /proc/self/status)",
      );
    if (!seal.bubblewrap) {
      throw new SealUnavailableError(
        "seccomp",
        "the filter is installed by bubblewrap; with seal.bubblewrap off, set seal.seccomp to false too",
      );
    }
  }
  return { bubblewrap: seal.bubblewrap, seccomp: seal.seccomp, uidDrop };
}

/**
 * Starts the smallest sandbox with the same namespace flags (as the dropped uid when there is one) and
 * returns why it failed, or undefined. This catches what no file check can: AppArmor or sysctls that
 * forbid unprivileged user namespaces, a seccomp'd container, a bwrap that is too old for
 * `--disable-userns`. Successes are cached per tool set and uid.
 */
function probeBwrap(t: HostTools, uidDrop: { uid: number; gid: number } | false): Promise<string | undefined> {
  const key = JSON.stringify([t.bwrap, t.setpriv, uidDrop]);
  let hit = probeCache.get(key);
  if (!hit) {
    const bwrap = [t.bwrap, ...ISOLATION_FLAGS, "--ro-bind", "/", "/", "--", "/bin/sh", "-c", ":"];
    const argv = uidDrop
      ? [t.setpriv, `--reuid=${uidDrop.uid}`, `--regid=${uidDrop.gid}`, "--clear-groups", "--", ...bwrap]
      : bwrap;
    hit = new Promise((resolve) => {
      execFile(argv[0]!, argv.slice(1), { env: {}, timeout: 10_000 }, (error, _stdout, stderr) => {
        // Only a success is remembered: a host that gets fixed is seen at the next check.
        if (error) probeCache.delete(key);
        resolve(error ? (String(stderr).trim() || error.message).slice(0, 500) : undefined);
      });
    });
    probeCache.set(key, hit);
  }
  return hit;
}
