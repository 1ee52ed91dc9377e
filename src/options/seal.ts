// `seal`: which layers to set up around the Python sidecars and the native tier. The option, its
// default, its schema, and what it resolves to, side by side.

import { z } from "zod";
import type { AsParsed, Same } from "./zod.ts";

/** Which layers of the seal to set up around sidecars and the native tier. Each defaults to on. */
export interface SealOptions {
  /**
   * bubblewrap namespaces (user, pid, net, ipc, uts, mount), read-only binds, empty environment.
   * @defaultValue true
   */
  bubblewrap?: boolean;
  /**
   * seccomp-bpf syscall allowlist: `true` answers an unlisted syscall with EPERM; `"kill"` kills the
   * process instead (a test mode); `false` installs no filter.
   * @defaultValue true
   */
  seccomp?: boolean | "kill";
  /**
   * Node's permission model inside the Pyodide sidecar.
   * @defaultValue true
   */
  nodePermissions?: boolean;
  /**
   * When the host runs as root, drop the sidecar to an unprivileged uid/gid: `true` means 65534/65534.
   * @defaultValue true
   */
  dropPrivileges?: boolean | { uid: number; gid: number };
}

/** The seal a caller gets by passing nothing: every layer on. These are values `SealOptions` accepts. */
export const DEFAULT_SEAL: Readonly<Required<SealOptions>> = Object.freeze({
  bubblewrap: true,
  seccomp: true,
  nodePermissions: true,
  dropPrivileges: Object.freeze({ uid: 65534, gid: 65534 }),
});

/** The seal after resolution: what the jail is asked to set up. */
export interface ResolvedSeal {
  bubblewrap: boolean;
  seccomp: "enforce" | "kill" | false;
  nodePermissions: boolean;
  dropPrivileges: { uid: number; gid: number } | false;
}

/** Turns `SealOptions` (already validated) into what the jail sets up; `{}` gives every layer on. */
export function resolveSeal(seal: SealOptions): ResolvedSeal {
  const seccomp = seal.seccomp ?? DEFAULT_SEAL.seccomp;
  const drop = seal.dropPrivileges ?? DEFAULT_SEAL.dropPrivileges;
  return {
    bubblewrap: seal.bubblewrap ?? DEFAULT_SEAL.bubblewrap,
    seccomp: seccomp === true ? "enforce" : seccomp,
    nodePermissions: seal.nodePermissions ?? DEFAULT_SEAL.nodePermissions,
    dropPrivileges: drop === true ? { uid: 65534, gid: 65534 } : drop === false ? false : { ...drop },
  };
}

/** The resolved seal with every layer on, for internal callers (doctor, tests) that need one. */
export const RESOLVED_DEFAULT_SEAL: Readonly<ResolvedSeal> = Object.freeze(resolveSeal({}));

export const sealSchema = z
  .object({
    bubblewrap: z.boolean(),
    seccomp: z.union([z.boolean(), z.literal("kill")]),
    nodePermissions: z.boolean(),
    dropPrivileges: z.union([
      z.boolean(),
      z
        .object({
          uid: z
            .number()
            .int()
            .min(1)
            .max(2 ** 31),
          gid: z
            .number()
            .int()
            .min(1)
            .max(2 ** 31),
        })
        .strict(),
    ]),
  })
  .partial()
  .strict();

/** The schema and `SealOptions` name the same fields with the same types (checked when compiling). */
export const sealTied: Same<z.infer<typeof sealSchema>, AsParsed<SealOptions>> = true;
