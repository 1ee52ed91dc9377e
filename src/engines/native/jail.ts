// How a native run's jail is built: the spec every jail of the tier starts from (the interpreter, the
// driver and the harness bound read-only, the scratch and the rlimits sized from the run's limits),
// and, for a sandbox with network, the private directory holding the jail's proxy socket, which is
// the jail's only way out (its own network namespace is empty). index.ts spawns and runs them.

import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { jailScratchParent, type JailSpec } from "../../jail/index.ts";
import { NetworkProxy } from "../../network/proxy.ts";
import type { ResolvedSeal } from "../../options/index.ts";
import type { InstalledLibrary } from "../../library/library.ts";
import type { Limits } from "../../core/types.ts";
import { pythonJailSpec, type PythonLayout } from "./binds.ts";

/**
 * The per-jail proxy directories that exist now. Each is removed when its jail is done; any left
 * when the process exits (a host ended by an error of its own, or one that never closed its
 * sandbox) go in the exit hook, so no `wasmcell-net-*` directory outlives the host.
 */
const netDirs = new Set<string>();
let exitHook = false;

function trackNetDir(dir: string): void {
  netDirs.add(dir);
  if (exitHook) return;
  exitHook = true;
  process.once("exit", () => {
    for (const d of [...netDirs]) removeNetDir(d);
  });
}

/** Removes a proxy directory; one that cannot be removed now stays listed for the exit hook. */
function removeNetDir(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
    netDirs.delete(dir);
  } catch {
    // kept in netDirs: the exit hook tries again (nothing in it is reachable once the proxy is closed)
  }
}

export const DRIVER = fileURLToPath(new URL("./driver.py", import.meta.url));
export const HARNESS = fileURLToPath(new URL("../lib/python/harness.py", import.meta.url));
export const BRIDGE = fileURLToPath(new URL("./bridge.py", import.meta.url));
/** The warm parent (parent.py), bound beside the driver in its jail. */
export const PARENT = {
  host: fileURLToPath(new URL("./parent.py", import.meta.url)),
  jail: "/sandbox/python/parent.py",
} as const;
/** The display module both Python tiers load (display(), reprs, figures), bound beside the harness. */
export const DISPLAY = fileURLToPath(new URL("../lib/python/wasmcell_display.py", import.meta.url));
/** The package's own files the native tier binds into its jail (doctor checks the drop uid reaches them). */
export const NATIVE_RUNTIME_FILES = [DRIVER, HARNESS, BRIDGE, DISPLAY, PARENT.host] as const;
/** The host proxy's directory in the jail (a run with network; src/network/proxy.ts). */
const NET_DIR = "/sandbox/net";
export const PROXY_SOCKET = `${NET_DIR}/proxy.sock`;
/** Debian's CA bundle (what Debian's requests and ssl use); bound only into jails with network. */
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
const JAIL_DIR = "/sandbox/python";
/** The package library (`wasmcell setup`), bound read-only; driver.py puts it ahead of Debian's dist-packages. */
const PACKAGES_DIR = "/sandbox/packages";
const WORK_DIR = "/tmp/work";

/**
 * Address space the interpreter reserves beyond what it uses (OpenBLAS thread buffers, arenas): a
 * numpy + pandas + matplotlib run peaks at ~450 MB of *virtual* memory with ~95 MB resident. RLIMIT_AS
 * is set to memoryMb + this, so a huge allocation fails with MemoryError at once; the cgroup (root)
 * caps what is really resident.
 */
export const ADDRESS_SPACE_RESERVE = 768 * 1024 * 1024;

/** The spec of a jail for a run with `limits` (no network: see withProxy). */
export function nativeJailSpec(
  layout: PythonLayout,
  seal: ResolvedSeal,
  limits: Limits,
  library: InstalledLibrary | undefined,
): JailSpec {
  const memoryBytes = limits.memoryMb * 1024 * 1024;
  const spec: JailSpec = {
    // -I: no user site, no PYTHON* variables, no script dir on sys.path; -u: unbuffered stdio, so
    // output written before a kill still reaches us.
    // The harness and the display module are arguments too: unjailed (seal.bubblewrap off) each may
    // be a staged copy in a directory of its own (src/jail/stage.ts), and the driver puts their
    // directories on sys.path.
    ...pythonJailSpec(
      layout,
      ["-I", "-u", `${JAIL_DIR}/driver.py`, `${JAIL_DIR}/harness.py`, `${JAIL_DIR}/wasmcell_display.py`],
      seal,
    ),
    roBinds: [
      ...layout.binds,
      { host: DRIVER, jail: `${JAIL_DIR}/driver.py` },
      { host: HARNESS, jail: `${JAIL_DIR}/harness.py` },
      { host: DISPLAY, jail: `${JAIL_DIR}/wasmcell_display.py` },
      ...(library ? [{ host: library.site, jail: PACKAGES_DIR }] : []),
    ],
    // Room for the input and output files (charged to the memory cgroup when there is one).
    scratchMb: Math.ceil((2 * limits.maxFileBytes) / (1024 * 1024)) + 32,
    scratchDir: "/tmp",
    workDir: WORK_DIR,
    env: {
      // matplotlib's backend is wasmcell's display module (it draws with Agg and shows figures as
      // display items); the module sets the same value when it loads.
      MPLBACKEND: "module://wasmcell_display",
      MPLCONFIGDIR: "/tmp/.matplotlib",
      HOME: WORK_DIR,
      // One BLAS thread: a run has the cores it shares with every other run, and OpenBLAS's idle
      // workers spin on sched_yield between calls (a tenth of a data call's CPU in a child, measured),
      // and a warm parent would otherwise hold threads its forked children do not have.
      OPENBLAS_NUM_THREADS: "1",
      ...(library ? { WASMCELL_PACKAGES: PACKAGES_DIR } : {}),
    },
    rlimits: {
      // CPU seconds are a backstop for the wall-clock kill; waiting for a request costs none.
      cpuSeconds: Math.ceil(limits.timeoutMs / 1000) + 2,
      fileSizeBytes: Math.max(limits.maxFileBytes, 1024 * 1024),
      openFiles: 256,
      addressSpaceBytes: memoryBytes + ADDRESS_SPACE_RESERVE,
    },
    memoryBytes,
    memoryFallbackAddressSpaceBytes: memoryBytes + ADDRESS_SPACE_RESERVE,
    pidsMax: 32,
    // fd 4: the driver's result line; fds 5/6: the guest's stdout/stderr (see driver.py)
    extraPipes: 3,
  };
  return spec;
}

/** What a jail with network gets: its proxy's directory, its own socket inside. */
export interface NetDir {
  dir: string;
  proxy: NetworkProxy;
  /** Closes the proxy and removes the directory; never throws. */
  close: () => Promise<void>;
}

/** Binds `net`'s proxy directory (and the CA bundle) into `spec`, with the network seccomp variant. */
export function withProxy(spec: JailSpec, net: NetDir): void {
  // The proxy's socket lives in a directory of this jail alone, bound read-only (connecting to a
  // unix socket needs no write access to the mount); the guest's filter gets the network variant.
  // The system's CA bundle too (public data), so `requests` verifies real servers as it would outside.
  spec.roBinds = [
    ...(spec.roBinds ?? []),
    { host: BRIDGE, jail: `${JAIL_DIR}/bridge.py` },
    { host: net.dir, jail: NET_DIR },
    ...(existsSync(CA_BUNDLE) ? [{ host: CA_BUNDLE, jail: CA_BUNDLE }] : []),
  ];
  spec.seccompProfile = "python-native-net";
}

/** A fresh private directory with the jail's proxy listening in it; `close` removes both. */
export async function openNetDir(seal: ResolvedSeal): Promise<NetDir> {
  const drop = seal.dropPrivileges;
  const owner = drop && process.getuid?.() === 0 ? drop : undefined;
  const dir = mkdtempSync(join(jailScratchParent(owner), "wasmcell-net-"));
  // 0700 (mkdtemp's mode): only the jail's uid (and root) may enter it.
  if (owner) chownSync(dir, owner.uid, owner.gid);
  trackNetDir(dir);
  let proxy: NetworkProxy;
  try {
    proxy = await NetworkProxy.listen(join(dir, "proxy.sock"), owner);
  } catch (error) {
    removeNetDir(dir);
    throw error;
  }
  return {
    dir,
    proxy,
    // Never throws (it runs after the jail exits, where nothing would catch it); the directory goes
    // whatever the proxy's close did.
    close: async () => {
      try {
        await proxy.close();
      } catch {
        // the server was already closed: nothing left to end
      } finally {
        removeNetDir(dir);
      }
    },
  };
}
