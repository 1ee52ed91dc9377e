// Every error wasmcell *throws* lives here. These are for host misuse and host-side failures
// (bad options, use after close, a seal layer that cannot be set up, a full queue). Failures the
// guest causes are never thrown: they come back as `RunFailure` with a `GuestError` (see types.ts).
// Callers branch on `code`, never on message text.

export type WasmcellErrorCode =
  /** An option or request field is invalid; `field` names it. */
  | "INVALID_OPTION"
  /** The sandbox (or a pool, or a session) was used after `close()`/`destroy()`. */
  | "CLOSED"
  /** A layer of the seal the caller asked for cannot be set up on this machine. */
  | "SEAL_UNAVAILABLE"
  /** An engine cannot run here (missing binary, unsupported platform). */
  | "ENGINE_UNAVAILABLE"
  /** The engine failed to start (a sidecar that never became ready). */
  | "ENGINE_START_FAILED"
  /** More runs are waiting than the queue allows. */
  | "QUEUE_FULL"
  /** No queue worker answered a run within the client's wait (`wasmcell/queue`); the job may still run. */
  | "QUEUE_WAIT"
  /** `wasmcell setup` could not install the package library (a download, a checksum, a build step). */
  | "SETUP_FAILED"
  /** A file setup installed no longer matches its record; the engine refuses to use it. */
  | "INTEGRITY"
  /** A sandbox session's workspace refused a path or a write (outside the base directory, over a cap). */
  | "WORKSPACE"
  /** A session snapshot was refused on resume; `reason` says which check it failed. */
  | "SNAPSHOT_REJECTED"
  /** This session cannot be snapshotted (a native process, or state that cannot leave its interpreter). */
  | "SNAPSHOT_UNSUPPORTED"
  /** A stored session's lock was held elsewhere past the wait, lost mid-run, or its wait cancelled; `reason` says which. */
  | "SESSION_BUSY"
  /** A stored MCP session's state would be over its quota (`sessionQuotaBytes`): this call's state was not kept. */
  | "SESSION_QUOTA"
  /** A feature of another API that has no meaning here (`wasmcell/e2b`'s templates, public URLs, commands); `feature` names it. */
  | "NOT_SUPPORTED"
  /** A feature needs an optional peer dependency that is not installed (`wasmcell/queue`: bullmq and ioredis). */
  | "MISSING_DEPENDENCY";

/**
 * Every code, listed once for the places that check codes at run time (the queue's reply schema, the
 * traces' attribute allowlist): a code added to the type above fails to compile until it is here.
 */
export const WASMCELL_ERROR_CODES = [
  "INVALID_OPTION",
  "CLOSED",
  "SEAL_UNAVAILABLE",
  "ENGINE_UNAVAILABLE",
  "ENGINE_START_FAILED",
  "QUEUE_FULL",
  "QUEUE_WAIT",
  "SETUP_FAILED",
  "INTEGRITY",
  "WORKSPACE",
  "SNAPSHOT_REJECTED",
  "SNAPSHOT_UNSUPPORTED",
  "SESSION_BUSY",
  "SESSION_QUOTA",
  "NOT_SUPPORTED",
  "MISSING_DEPENDENCY",
] as const satisfies readonly WasmcellErrorCode[];
type UnlistedCode = Exclude<WasmcellErrorCode, (typeof WASMCELL_ERROR_CODES)[number]>;
const _everyCodeListed: [UnlistedCode] extends [never] ? true : UnlistedCode = true;

export class WasmcellError extends Error {
  override name = "WasmcellError";
  readonly code: WasmcellErrorCode;
  constructor(code: WasmcellErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Bad options or a bad request field. `field` is the dotted path (`limits.timeoutMs`). */
export class InvalidOptionError extends WasmcellError {
  override name = "InvalidOptionError";
  readonly field: string;
  constructor(field: string, message: string) {
    super("INVALID_OPTION", `${field}: ${message}`);
    this.field = field;
  }
}

export class ClosedError extends WasmcellError {
  override name = "ClosedError";
  constructor(what = "sandbox") {
    super("CLOSED", `the ${what} is closed`);
  }
}

/** A seal layer that was asked for and cannot be set up. `layer` names it (`bubblewrap`, `seccomp`, …). */
export class SealUnavailableError extends WasmcellError {
  override name = "SealUnavailableError";
  readonly layer: string;
  constructor(layer: string, message: string, options?: { cause?: unknown }) {
    super("SEAL_UNAVAILABLE", `seal layer "${layer}" cannot be set up: ${message}`, options);
    this.layer = layer;
  }
}

export class EngineUnavailableError extends WasmcellError {
  override name = "EngineUnavailableError";
  readonly engine: string;
  constructor(engine: string, message: string, options?: { cause?: unknown }) {
    super("ENGINE_UNAVAILABLE", `engine "${engine}" is not available: ${message}`, options);
    this.engine = engine;
  }
}

export class EngineStartError extends WasmcellError {
  override name = "EngineStartError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("ENGINE_START_FAILED", message, options);
  }
}

export class QueueFullError extends WasmcellError {
  override name = "QueueFullError";
  constructor(what: string, limit: number) {
    super("QUEUE_FULL", `${what}: ${limit} runs are already waiting; try again later or raise the queue bound`);
  }
}

/** A queued run's result did not come within the client's `waitMs`: the job is not cancelled and may still run. */
export class QueueWaitError extends WasmcellError {
  override name = "QueueWaitError";
  readonly id: string;
  constructor(id: string, waitMs: number) {
    super("QUEUE_WAIT", `job "${id}": no result within ${waitMs} ms; it stays queued (client.result(id) waits again)`);
    this.id = id;
  }
}

/** The package library could not be installed or verified; nothing half-installed is left behind. */
export class SetupError extends WasmcellError {
  override name = "SetupError";
  constructor(message: string, options?: { cause?: unknown }) {
    super("SETUP_FAILED", message, options);
  }
}

/** A downloaded or installed file does not match the lock (or the install manifest). */
export class ChecksumError extends SetupError {
  override name = "ChecksumError";
  /** The Debian package (or library file) whose bytes differ. */
  readonly subject: string;
  readonly expected: string;
  readonly actual: string;
  constructor(subject: string, what: string, expected: string, actual: string) {
    super(`checksum mismatch for ${subject} (${what}): the lock says sha256 ${expected}, got ${actual}`);
    this.subject = subject;
    this.expected = expected;
    this.actual = actual;
  }
}

/**
 * A file `wasmcell setup` installed (the package library) no longer matches what setup recorded: the
 * engine does not use it. `file` names it; `wasmcell setup --force` reinstalls.
 */
export class IntegrityError extends WasmcellError {
  override name = "IntegrityError";
  readonly file: string;
  constructor(file: string, problem: string) {
    super(
      "INTEGRITY",
      `the package library is not used: ${file} ${problem}. Run \`wasmcell setup --force\` to reinstall it`,
    );
    this.file = file;
  }
}

/**
 * A file operation on a sandbox session's workspace (`wasmcell/ai`'s `createSandboxSession`) that it
 * refuses: a path outside the base directory, a directory where a file was expected (or the reverse),
 * or a write past the workspace's caps. `path` is the path as given.
 */
export class WorkspaceError extends WasmcellError {
  override name = "WorkspaceError";
  readonly path: string;
  constructor(path: string, problem: string) {
    super("WORKSPACE", `${JSON.stringify(path)}: ${problem}`);
    this.path = path;
  }
}

/**
 * Why the host refused a guest's network request. Not a WasmcellError: it is never thrown to the
 * application; the engines hand it to the guest as an exception whose message names the host and the
 * reason, and the event channel records it (`{ type: "egress", allowed: false, reason }`).
 */
/**
 * `response`: the server's answer is one the gate does not pass on (an upgrade, or a status that is
 * not a final HTTP status, 200–599); the request was made, its answer refused.
 */
export type NetworkDenialReason =
  | "no-network"
  | "scheme"
  | "not-allowed"
  | "address"
  | "dns"
  | "method"
  | "redirect"
  | "limit"
  | "timeout"
  | "response";

export class NetworkDeniedError extends Error {
  override name = "NetworkError";
  readonly reason: NetworkDenialReason;
  /** `host:port` the request was for (empty when the URL did not parse). */
  readonly target: string;
  constructor(reason: NetworkDenialReason, target: string, message: string) {
    super(message);
    this.reason = reason;
    this.target = target;
  }
}

/** Which check a refused snapshot failed: each one its own reason, so callers can tell them apart. */
export type SnapshotRejection =
  /** Its tag does not match its bytes under this host's key (a changed byte, or a forgery). */
  | "authentication"
  /** It was made under another key (`sessions.key`): another process without a shared key, or another host. */
  | "key"
  /** A format this version of wasmcell does not read. */
  | "version"
  /** Made by another engine (or another engine version) than the one asked to resume it. */
  | "engine"
  /** Made against another engine image or package lock: its memory would not fit this interpreter. */
  | "lock"
  /**
   * Relative to another engine checkpoint than this sandbox's sidecars start from (Pyodide: another
   * engine snapshot file — each `wasmcell setup` builds its own, with its own hash seed — or none).
   */
  | "checkpoint"
  /**
   * Over `sessions.maxSnapshotBytes`, or its state inflates past what the interpreter could hold, or
   * its memory is more than an interpreter here can grow to.
   */
  | "size"
  /** Not a snapshot at all, or cut short, or authenticated but not loadable (then nothing was resumed). */
  | "corrupt"
  /** Gone before anything resumed it: its store removed it to stay within its size budget. */
  | "evicted";

/** `sandbox.resume(bytes)` refused the bytes; nothing of them reached a live interpreter that stays. */
export class SnapshotRejectedError extends WasmcellError {
  override name = "SnapshotRejectedError";
  readonly reason: SnapshotRejection;
  constructor(reason: SnapshotRejection, message: string) {
    super("SNAPSHOT_REJECTED", `the session snapshot was refused (${reason}): ${message}`);
    this.reason = reason;
  }
}

/**
 * `session.snapshot()` / `fork()` cannot take this session's state. `reason`: `native` (a real
 * process: its state is not data), `state` (the interpreter holds something that cannot move: an open
 * file, a loaded C extension library, JavaScript references), `engine` (the engine keeps no snapshots),
 * `checkpoint` (a Pyodide sidecar started without the engine snapshot — `python.snapshot` false, or
 * the snapshot still being built: its state is relative to that one interpreter, so no other sidecar
 * could resume it; the session stays where it is), `size` (the sealed snapshot would be over
 * `sessions.maxSnapshotBytes`, which every resume refuses: the session stays where it is, and is not
 * evicted).
 */
export class SnapshotUnsupportedError extends WasmcellError {
  override name = "SnapshotUnsupportedError";
  readonly reason: "native" | "state" | "engine" | "checkpoint" | "size";
  constructor(reason: "native" | "state" | "engine" | "checkpoint" | "size", message: string) {
    super("SNAPSHOT_UNSUPPORTED", message);
    this.reason = reason;
  }
}

/**
 * A run on a stored session could not hold the session's lock (SessionStore.lock), so it never ran at
 * once with another. `busy`: another call on the same session held it (in this process or on another
 * replica) for longer than the wait; nothing ran. `lost`: the lease ran out mid-run and may have been
 * taken elsewhere, so this run's state was not saved (the stored session is as it was before the call).
 * `aborted`: the caller's signal aborted the call while it waited for the lock; nothing ran.
 */
export class SessionBusyError extends WasmcellError {
  override name = "SessionBusyError";
  readonly reason: "busy" | "lost" | "aborted";
  constructor(reason: "busy" | "lost" | "aborted", message: string, options?: ErrorOptions) {
    super("SESSION_BUSY", message, options);
    this.reason = reason;
  }
}

/**
 * A stored MCP session's records (each language it ran, each fork it made) would together be over
 * its quota (`sessionQuotaBytes`): the call's new state was not kept, and the stored session is as it
 * was before the call.
 */
export class SessionQuotaError extends WasmcellError {
  override name = "SessionQuotaError";
  constructor(message: string) {
    super("SESSION_QUOTA", message);
  }
}

/**
 * A call that a compatibility adapter (`wasmcell/e2b`) accepts from another product's API but that has
 * no meaning in a local, sealed sandbox: a template, a public URL, a background command, a remote
 * sandbox id. Thrown at once, before anything runs, so code written for the other product fails where
 * it asks for the feature instead of later and vaguely. `feature` names what was asked for.
 */
export class NotSupportedError extends WasmcellError {
  override name = "NotSupportedError";
  readonly feature: string;
  constructor(feature: string, why: string) {
    super("NOT_SUPPORTED", `${feature} is not supported by wasmcell: ${why}`);
    this.feature = feature;
  }
}

/**
 * A feature needs packages that are optional peer dependencies of wasmcell and are not installed, so
 * that `npm i wasmcell` stays lean for everyone who does not use it: the queue needs bullmq and
 * ioredis, the Redis session store ioredis. `packages` names them; the message gives the install command.
 */
export class MissingDependencyError extends WasmcellError {
  override name = "MissingDependencyError";
  readonly packages: readonly string[];
  constructor(feature: string, packages: readonly string[], options?: { cause?: unknown }) {
    const what =
      packages.length === 1
        ? `${packages[0]}, an optional peer dependency of wasmcell that is not installed`
        : `${packages.join(" and ")}, optional peer dependencies of wasmcell that are not installed`;
    super("MISSING_DEPENDENCY", `${feature} needs ${what}: npm i ${packages.join(" ")}`, options);
    this.packages = packages;
  }
}
