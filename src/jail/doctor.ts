// The seal half of `wasmcell doctor`: which layers of the seal this machine supports, and why not when
// one is missing. Returns data; the engines' own checks (src/engines/doctor.ts) add the engines, and the
// CLI prints it. Every answer comes from a real check here (a binary that runs, a cgroup that can be
// made), not from the platform name. The jail knows nothing of engines.

import { WasmcellError } from "../core/errors.ts";
import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal } from "../options/index.ts";
import { checkSeal } from "./check.ts";
import {
  cgroupSupport,
  DEFAULT_TOOLS,
  isExecutable,
  isRoot,
  kernelHasSeccomp,
  maxUserNamespaces,
  type HostTools,
} from "./host.ts";
import { PROFILES } from "./profiles.ts";
import { compileProfile, ERRNO_EPERM } from "./seccomp.ts";

export interface LayerStatus {
  layer:
    | "bubblewrap"
    | "userNamespaces"
    | "seccomp"
    | "uidDrop"
    | "cgroupMemory"
    | "cgroupPids"
    | "rlimits"
    | "nodePermissions";
  available: boolean;
  /** What is in force, or why it is not available. */
  detail: string;
}

/** The seal layers this machine can set up, each with what is in force or why it is not. */
export interface SealReport {
  platform: string;
  arch: string;
  node: string;
  root: boolean;
  layers: LayerStatus[];
}

export interface SealReportOptions {
  seal?: ResolvedSeal;
  /** @internal */
  tools?: Partial<HostTools>;
}

export async function sealReport(options: SealReportOptions = {}): Promise<SealReport> {
  const seal = options.seal ?? RESOLVED_DEFAULT_SEAL;
  const t = { ...DEFAULT_TOOLS, ...options.tools };
  const layers: LayerStatus[] = [];
  const linux = process.platform === "linux";

  const userns = maxUserNamespaces();
  layers.push(
    userns === undefined
      ? {
          layer: "userNamespaces",
          available: false,
          detail: linux ? "/proc/sys/user/max_user_namespaces is missing" : `not Linux (${process.platform})`,
        }
      : userns === 0
        ? { layer: "userNamespaces", available: false, detail: "disabled: /proc/sys/user/max_user_namespaces is 0" }
        : { layer: "userNamespaces", available: true, detail: `max_user_namespaces=${userns}` },
  );

  layers.push(
    await layerFromCheck(
      "bubblewrap",
      { ...seal, bubblewrap: true, seccomp: false },
      t,
      `${t.bwrap}: a test sandbox started`,
    ),
  );

  const filterSize = compileProfile(PROFILES["python-native"], ERRNO_EPERM).length;
  layers.push(
    !linux
      ? { layer: "seccomp", available: false, detail: `not Linux (${process.platform})` }
      : process.arch !== "x64"
        ? { layer: "seccomp", available: false, detail: `the filter compiler targets x86_64; this is ${process.arch}` }
        : !kernelHasSeccomp()
          ? { layer: "seccomp", available: false, detail: "the kernel reports no seccomp support" }
          : {
              layer: "seccomp",
              available: true,
              detail: `BPF allowlists node-pyodide and python-native (${filterSize} instructions), installed by bubblewrap`,
            },
  );

  const drop = seal.dropPrivileges === false ? RESOLVED_DEFAULT_SEAL.dropPrivileges : seal.dropPrivileges;
  layers.push(
    !isRoot()
      ? {
          layer: "uidDrop",
          available: true,
          detail: `not needed: the host runs as uid ${process.getuid?.() ?? "?"}, not root`,
        }
      : !isExecutable(t.setpriv)
        ? { layer: "uidDrop", available: false, detail: `the host is root and ${t.setpriv} is missing` }
        : {
            layer: "uidDrop",
            available: true,
            detail: `root → uid ${drop ? drop.uid : 65534} with ${t.setpriv} before bubblewrap`,
          },
  );

  const cg = cgroupSupport();
  layers.push(
    cg.memoryParent
      ? { layer: "cgroupMemory", available: true, detail: `cgroup v1 memory children under ${cg.memoryParent}` }
      : {
          layer: "cgroupMemory",
          available: false,
          detail: `${cg.reason ?? "unavailable"}; memory is capped with RLIMIT_AS instead`,
        },
  );
  layers.push(
    cg.pidsParent
      ? { layer: "cgroupPids", available: true, detail: `cgroup v1 pids children under ${cg.pidsParent}` }
      : {
          layer: "cgroupPids",
          available: false,
          detail: `${cg.reason ?? "unavailable"}; thread count is bounded only by seccomp (no fork) and memory`,
        },
  );
  layers.push(
    isExecutable(t.prlimit)
      ? {
          layer: "rlimits",
          available: true,
          detail: `${t.prlimit}: CPU seconds, file size, open files, core, address space`,
        }
      : { layer: "rlimits", available: false, detail: `${t.prlimit} (util-linux) is missing` },
  );
  layers.push(nodePermissionStatus());

  return { platform: process.platform, arch: process.arch, node: process.version, root: isRoot(), layers };
}

async function layerFromCheck(
  layer: LayerStatus["layer"],
  seal: ResolvedSeal,
  tools: HostTools,
  okDetail: string,
): Promise<LayerStatus> {
  try {
    await checkSeal(seal, tools);
    return { layer, available: true, detail: okDetail };
  } catch (error) {
    return { layer, available: false, detail: error instanceof WasmcellError ? error.message : String(error) };
  }
}

/** Node's permission model in the running Node: `--permission` (≥ 22) and `--allow-net` (≥ 25). */
export function nodePermissionStatus(): LayerStatus {
  const flags = process.allowedNodeEnvironmentFlags;
  const permission = flags.has("--permission")
    ? "--permission"
    : flags.has("--experimental-permission")
      ? "--experimental-permission"
      : undefined;
  if (!permission)
    return { layer: "nodePermissions", available: false, detail: `Node ${process.version} has no permission model` };
  const net = flags.has("--allow-net");
  return {
    layer: "nodePermissions",
    available: true,
    detail: `Node ${process.version}: ${permission}; ${
      net
        ? "network denied unless --allow-net"
        : "no --allow-net flag: the permission model does not block network here (bubblewrap and seccomp do)"
    }`,
  };
}
