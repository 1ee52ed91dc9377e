// The wire protocol between the host and a Pyodide sidecar. Type declarations only, so the sidecar
// (which runs under Node's permission model and may read only its own file and Pyodide's) loads
// nothing from here at run time: `import type` is erased.
//
// Channel: the sidecar's stdin carries host → sidecar messages, its stdout sidecar → host messages,
// one JSON object per line (JSON.stringify never emits a raw newline, so guest text cannot break a
// frame). Guest stdout/stderr are never written to the process's stdout: they travel inside `out`
// frames, as data. The sidecar's own stderr carries diagnostics only (bounded by the host).
//
// Start-up: the host writes one `init` line, then exactly `snapshotBytes` raw bytes (a Pyodide memory
// snapshot, or nothing), then JSON lines.

import type { Limits } from "../../core/types.ts";

export interface InitMessage {
  t: "init";
  /** `serve`: answer runs; `snapshot`: load cold, emit a memory snapshot, exit. */
  mode: "serve" | "snapshot";
  /** Bytes of Pyodide memory snapshot that follow the init line (0: cold load). */
  snapshotBytes: number;
  /** The snapshot is not on stdin but read from this inherited read-only descriptor (snapshotBytes long). */
  snapshotFd?: number;
  /** Keep interpreter state across runs on purpose (a session): no reset between runs. */
  stateful: boolean;
  /** `snapshot` mode: modules imported before the snapshot is taken (standard library and package library). */
  preload?: string[];
}

export interface RunMessage {
  t: "run";
  id: number;
  code: string;
  /** Input files: relative path → base64 bytes. */
  files: Record<string, string>;
  /** The run's limits, whole (the one payload every engine gets; the sidecar reads what it enforces). */
  limits: Limits;
  /**
   * Appended where output is cut at `limits.maxOutputBytes` (src/kit/truncation.ts, the same text
   * every engine uses). Sent rather than built in the sidecar, which imports nothing from src/.
   */
  truncationMarker: string;
  /** A session's run on a pool sidecar: no reset afterwards (the session keeps the interpreter). */
  keep?: boolean;
}

/** A session's state as a record (sidecar/session-state.ts): answered with a `state` frame. */
export interface SaveMessage {
  t: "save";
  id: number;
  /**
   * The sidecar's process memory cap: a save that would need more than it leaves is refused (`size`)
   * before anything is copied (sidecar/budget.ts). Absent: not bounded.
   */
  capBytes?: number;
}

/**
 * Puts a session's record into this pristine sidecar: `bytes` raw bytes follow the line. Answered with
 * `loaded` (or `loaded` + `retire`, and the sidecar exits: nothing half-loaded is served).
 */
export interface LoadMessage {
  t: "load";
  id: number;
  bytes: number;
  /** The most the record may inflate to. */
  maxBytes: number;
  /** The sidecar's process memory cap: a load that would need more is refused (`size`) first. */
  capBytes?: number;
  /** The resumer's `limits.memoryMb`, in bytes: a session whose WASM memory is larger is refused (`size`). */
  memoryBytes?: number;
  /**
   * Draw a new seed for Python's module-level `random` before the session's next run (a fork, a
   * resume that is a new copy); absent for a session carrying on (eviction, a stored session's next call).
   */
  reseed?: boolean;
  /** Filled in by the sidecar's channel: the raw bytes that followed. */
  data?: Uint8Array;
}

/** The session is done with this sidecar: back to the checkpoint, proven; answered with `reset`. */
export interface EndMessage {
  t: "end";
  id: number;
}

/** The host's answer to a `fetch` frame: `reply` is JSON text the sidecar hands to Python as it is. */
export interface NetReplyMessage {
  t: "net";
  seq: number;
  reply: string;
}

export type HostMessage = RunMessage | NetReplyMessage | SaveMessage | LoadMessage | EndMessage;

export interface ReadyMessage {
  t: "ready";
  /** Milliseconds from process start to ready (load + hardening + checkpoint). */
  startMs: number;
  loadMs: number;
  /** Where the start-up went: init + snapshot received (since process start), setup, checkpoint. */
  phases: { received: number; setup: number; checkpoint: number };
  fromSnapshot: boolean;
}

export interface SnapshotMessage {
  t: "snapshot";
  /** Bytes of snapshot that follow this line on stdout, raw. */
  bytes: number;
}

export interface OutputMessage {
  t: "out";
  id: number;
  stream: "stdout" | "stderr";
  text: string;
}

/** One display item, as the guest's display module wrote it (JSON text: the host parses it). */
export interface DisplayMessage {
  t: "display";
  id: number;
  item: string;
}

export interface ResultFile {
  path: string;
  /** base64 */
  data: string;
}

export interface ResultMessage {
  t: "result";
  id: number;
  /**
   * The harness's JSON envelope (see src/engines/lib/python/harness.py). It is made by code in the guest's
   * interpreter, so the host takes no limit-kind (timeout, memory, denied) from it.
   */
  envelope?: string;
  /** Instead of an envelope: a failure the sidecar itself observed (a JavaScript error out of WASM). */
  failure?: SidecarFailure;
  files: ResultFile[];
  /** Which file cap the run's files passed: the run fails with `output_limit` naming it. */
  filesOverLimit?: "maxFiles" | "maxFileBytes";
  /** An item was longer than the display device holds: the run fails with limits.maxDisplayItemBytes. */
  displayOverLimit?: boolean;
  /** The sidecar could not read the working directory back (why): the run fails as `crashed`. */
  filesUnreadable?: string;
  outputBytes: number;
  outputTruncated: boolean;
  peakMemoryBytes: number;
  /** The deadline fired in the sidecar (interrupt delivered). */
  interrupted: boolean;
  /** The memory cap refused a WASM memory growth during the run. */
  memoryCapHit: boolean;
}

export interface SidecarFailure {
  kind: "timeout" | "memory" | "stack" | "denied" | "crashed";
  name: string;
  message: string;
}

export interface RecycledMessage {
  t: "reset";
  id: number;
  /** Time the reset took. */
  ms: number;
  /** When set, the sidecar could not prove its state clean and is exiting; the host replaces it. */
  retire?: string;
}

/** A `save`'s answer: `bytes` raw bytes of record follow, or `refused` says why there is none. */
export interface StateMessage {
  t: "state";
  id: number;
  bytes?: number;
  refused?: string;
  /** The refusal is the session's size (what taking it out would need), not its kind of state. */
  size?: boolean;
  ms: number;
}

/**
 * A `load`'s answer. With `retire`, the record was not (or not provably) loaded and the sidecar exits.
 * With `refused`, it was refused before anything of it reached the interpreter (it does not parse, it
 * was taken elsewhere, or it is too large here: `size`), and the sidecar is pristine still.
 */
export interface LoadedMessage {
  t: "loaded";
  id: number;
  ms: number;
  retire?: string;
  refused?: string;
  size?: boolean;
}

export interface FatalMessage {
  t: "fatal";
  message: string;
}

/** Guest Python asks for a network request (JSON text: url, method, headers, base64 body). */
export interface FetchMessage {
  t: "fetch";
  id: number;
  seq: number;
  request: string;
}

export type SidecarMessage =
  | ReadyMessage
  | SnapshotMessage
  | OutputMessage
  | DisplayMessage
  | ResultMessage
  | RecycledMessage
  | FatalMessage
  | FetchMessage
  | StateMessage
  | LoadedMessage;
