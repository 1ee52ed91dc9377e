// The staging half of `wasmcell doctor`: whether the jail's drop uid can reach the runtime files the
// engines bind (an install under a 0700 directory as root cannot), and if not, where the staged
// copies go, how big they are, and whether staging really works here — by staging them (as the first
// run would; the copies are then reused) and checking that the drop uid can read the result.

import { realpathSync } from "node:fs";
import type { ResolvedSeal } from "../options/index.ts";
import { isRoot, readableBy } from "./host.ts";
import { fingerprint, isRuntimeFile, stageReadable, stageStore } from "./stage.ts";
import { treeBytes, type StageStore } from "./stage-store.ts";

export interface StagedPath {
  path: string;
  /** Why the drop uid cannot read it where it is installed. */
  reason: string;
  bytes: number;
  /** The staged copy, when staging it worked. */
  staged?: string;
  /** Whether a copy was already in the store (else doctor made it). */
  reused?: boolean;
}

export interface StagingStatus {
  /** Whether some runtime file must be staged for the jail's drop uid. */
  needed: boolean;
  /** False when a runtime file the jail needs can neither be read nor staged: the Python tiers fail. */
  available: boolean;
  /** Where staged copies live. */
  root: string;
  paths: StagedPath[];
  /** Bytes of all the staged paths. */
  bytes: number;
  detail: string;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/**
 * Whether the drop uid of `seal` reaches each of `paths` (the runtime files the engines bind), and
 * stages the ones it cannot reach.
 */
export function stagingStatus(
  paths: readonly string[],
  seal: ResolvedSeal,
  /** @internal */
  store: StageStore = stageStore,
): StagingStatus {
  const base = { root: store.root, paths: [], bytes: 0 };
  const drop = seal.dropPrivileges;
  if (!isRoot() || !drop)
    return {
      ...base,
      needed: false,
      available: true,
      detail: `not needed: ${isRoot() ? "the uid drop is off" : "the host is not root"}, the jail reads the files as installed`,
    };
  const unreachable: StagedPath[] = [];
  for (const path of new Set(paths)) {
    const access = readableBy(path, drop.uid, drop.gid);
    if (!access.ok) unreachable.push({ path, reason: access.reason, bytes: 0 });
  }
  if (unreachable.length === 0)
    return {
      ...base,
      needed: false,
      available: true,
      detail: `not needed: uid ${drop.uid} reads every runtime file where it is installed`,
    };
  const problems: string[] = [];
  for (const entry of unreachable) {
    try {
      entry.bytes = treeBytes(realpathSync(entry.path));
      if (!isRuntimeFile(entry.path)) {
        problems.push(`${entry.path} is not the package's own file, so it is never staged (${entry.reason})`);
        continue;
      }
      entry.reused = store.has(fingerprint(entry.path));
      entry.staged = stageReadable(entry.path, store);
      entry.bytes = treeBytes(entry.staged); // what was copied: symlinks inside followed
      const access = readableBy(entry.staged, drop.uid, drop.gid);
      if (!access.ok) problems.push(`the staged copy of ${entry.path} is not readable: ${access.reason}`);
    } catch (error) {
      problems.push(`staging ${entry.path} failed: ${(error as Error).message}`);
    }
  }
  const bytes = unreachable.reduce((sum, e) => sum + e.bytes, 0);
  const reused = unreachable.filter((e) => e.reused).length;
  const why = unreachable[0]!.reason;
  const what = `${unreachable.length} runtime path(s), ${mb(bytes)}, that uid ${drop.uid} cannot reach (${why})`;
  return {
    root: store.root,
    paths: unreachable,
    bytes,
    needed: true,
    available: problems.length === 0,
    detail:
      problems.length === 0
        ? `${what} are staged under ${store.root} (${reused} reused, ${unreachable.length - reused} copied now); uid ${drop.uid} reads the copies`
        : `${what} cannot all be staged under ${store.root}: ${problems.join("; ")}`,
  };
}
