// Which engines a build of wasmcell can load. The package's export conditions pick the entry: the Node
// entry (src/index.ts) loads all three; the entry for Workers, browsers, Vercel Edge, Deno and Bun
// (src/edge.ts) loads only the JavaScript engine, so a bundler following it never meets
// node:child_process or node:fs. There the Python engines answer every run with an error result.

import type { ResolvedRequest } from "../options/index.ts";
import type { EngineName, RunFailure } from "../core/types.ts";
import type { checkMadeFor, openSnapshot } from "./sessions/snapshot.ts";
import type { Engine, EngineFactory } from "./engine.ts";
import { failedRun } from "../kit/failures.ts";

export interface SnapshotReader {
  openSnapshot: typeof openSnapshot;
  checkMadeFor: typeof checkMadeFor;
}

export interface EngineRegistry extends Readonly<Record<EngineName, () => Promise<{ createEngine: EngineFactory }>>> {
  /** The modules of the package library `wasmcell setup` installed for the engines to mount (none on the edge build). */
  readonly pythonPackages?: () => Promise<readonly string[] | undefined>;
  /** The session snapshot reader (node:crypto; none on the edge build, whose sessions do not snapshot). */
  readonly snapshots?: () => Promise<SnapshotReader>;
}

/**
 * An engine that cannot run on this runtime. Asking for it is not a host mistake the code can see at
 * build time (the same agent tool runs everywhere), so every run is a failure result saying why.
 */
export function unavailable(name: EngineName, why: string): () => Promise<{ createEngine: EngineFactory }> {
  const error = {
    kind: "denied",
    name: "EngineUnavailable",
    message: `the ${name} engine is not available here: ${why}`,
  } as const;
  const fail = (req: ResolvedRequest): Promise<RunFailure> =>
    Promise.resolve(failedRun(name, req, error, performance.now()));
  const engine: Engine = {
    name,
    run: fail,
    openSession: () => Promise.resolve({ run: fail, close: () => Promise.resolve() }),
    close: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  return () => Promise.resolve({ createEngine: () => Promise.resolve(engine) });
}
