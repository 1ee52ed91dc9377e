// What makes the JavaScript engines' sessions data (engines/sessions/data-session.ts): for each engine,
// how a live session is opened, saved and loaded, and the build digest a snapshot must match to be
// resumed here.
//
// The build digest is the snapshot's `lock`: a QuickJS state is a linear memory, which means anything
// only to the same wasm binary (its data layout, its function table) and the same runtime install code
// (the host functions' keys, the inventory's format). So it hashes the .wasm bytes and every source the
// install code evaluates. With `javascript.wasmModule` (a compiled module, whose bytes the host never
// sees) it hashes the module's import and export lists instead: two different builds with identical
// lists would not be told apart, so resuming across such builds is the caller's to avoid.

import { createHash } from "node:crypto";
import { SnapshotUnsupportedError } from "../../core/errors.ts";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ResolvedOptions } from "../../options/index.ts";
import { packageVersion } from "../../core/version.ts";
import type { QuickJSEngine, QuickJSSession } from "../lib/quickjs/index.ts";
import { FAMILY_SOURCES, INTERNALS_SOURCE } from "../lib/quickjs/runtime/sources.ts";
import { SERVICE_SOURCE } from "../lib/quickjs/service.ts";
import { INVENTORY_FORMAT } from "../lib/quickjs/state.ts";
import type { SavedState, SaveRefused, StateBackend } from "../sessions/backend.ts";
import type { ThreadSession } from "./threads/thread-session.ts";
import { forkState, liveState, maxSessionMemory, restoreState } from "./state-codec.ts";
import type { ThreadEngine } from "./threads/threads.ts";

const VARIANT = "@jitl/quickjs-wasmfile-release-sync";

interface WasmShape {
  Module: { imports(m: unknown): unknown[]; exports(m: unknown): unknown[] };
}

/** The digest of the QuickJS build and the runtime install code a snapshot's memory belongs to. */
export function buildDigest(wasmModule: object | undefined): string {
  const h = createHash("sha256");
  h.update(`wasmcell quickjs state ${INVENTORY_FORMAT}\0`);
  if (wasmModule === undefined) {
    h.update(readFileSync(fileURLToPath(import.meta.resolve(`${VARIANT}/wasm`))));
  } else {
    const wasm = (globalThis as unknown as { WebAssembly: WasmShape }).WebAssembly;
    h.update("caller module\0");
    h.update(JSON.stringify([wasm.Module.imports(wasmModule), wasm.Module.exports(wasmModule)]));
  }
  h.update(SERVICE_SOURCE).update(INTERNALS_SOURCE);
  for (const [name, family] of Object.entries(FAMILY_SOURCES))
    h.update(`\0${name}\0${family.source}\0${Object.keys(family.bindings ?? {}).join(",")}`);
  return h.digest("hex");
}

type Header = Awaited<ReturnType<NonNullable<StateBackend["header"]>>>;

function header(options: ResolvedOptions, compiled: object | undefined): Header {
  return {
    engine: "quickjs",
    engineVersion: `${VARIANT}@${variantVersion()} wasmcell@${packageVersion()}`,
    lock: buildDigest(compiled),
    limits: { ...options.limits },
  };
}

let variant: string | undefined;
function variantVersion(): string {
  variant ??= (
    JSON.parse(readFileSync(fileURLToPath(import.meta.resolve(`${VARIANT}/package.json`)), "utf8")) as {
      version: string;
    }
  ).version;
  return variant;
}

/** A save, or why the state cannot leave (a refusal the session keeps its place for, said once). */
async function saveOrRefuse(take: () => Promise<Uint8Array>): Promise<SavedState | SaveRefused> {
  try {
    return { state: await take() };
  } catch (error) {
    if (!(error instanceof SnapshotUnsupportedError)) throw error;
    const reason = error.reason === "size" || error.reason === "checkpoint" ? error.reason : "state";
    return { refused: error.message, lost: false, reason };
  }
}

/**
 * Sessions of the in-process engine: the state is taken and restored on this thread. `compiled`: the
 * caller's `javascript.wasmModule`, resolved (undefined: the package's own .wasm).
 */
export function inProcessBackend(
  engine: QuickJSEngine,
  options: ResolvedOptions,
  compiled: object | undefined,
): StateBackend<QuickJSSession> {
  const max = maxSessionMemory(options.limits.memoryMb);
  const head = header(options, compiled);
  return {
    engine: "quickjs",
    header: () => Promise.resolve(head),
    open: () => engine.openSession(),
    save: (live) => saveOrRefuse(() => liveState(live, max)),
    load: (saved) => restoreState(engine, saved.state, max),
    fork: (parent) => forkState(engine, parent),
  };
}

/** Sessions of the thread pool: taken and restored in a worker (the codec runs there, off this thread). */
export function threadBackend(
  engine: ThreadEngine,
  options: ResolvedOptions,
  compiled: object | undefined,
): StateBackend<ThreadSession> {
  const maxMemoryBytes = maxSessionMemory(options.limits.memoryMb);
  const head = header(options, compiled);
  return {
    engine: "quickjs",
    header: () => Promise.resolve(head),
    open: () => engine.openSession(),
    save: (live) => saveOrRefuse(() => live.save(maxMemoryBytes)),
    load: (saved) => engine.openSession({ bytes: saved.state, maxMemoryBytes }),
    fork: (parent) => {
      if (parent.handle.dead)
        throw new SnapshotUnsupportedError("state", "this session was lost with its worker thread");
      return engine.openSession({ forkOf: parent });
    },
  };
}
