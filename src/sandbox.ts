// The front door: createSandbox(options) → sandbox.run(request) → RunResult.
// It validates, picks the engine, and keeps engines alive; it knows nothing about how any engine works.
// Engines load lazily from a registry the entry hands in (src/engines/registry.ts): the Node entry's
// reaches the Python engines, the edge entry's does not, so bundling for an edge runtime pulls in
// nothing Node-only.

import { ClosedError, InvalidOptionError, SnapshotRejectedError, SnapshotUnsupportedError } from "./core/errors.ts";
import type { Engine, EngineSession } from "./engines/engine.ts";
import type { EngineRegistry } from "./engines/registry.ts";
import { InFlight } from "./kit/in-flight.ts";
import { SPANS, traceCall, traceRun, untraced } from "./kit/trace.ts";
import { describeRuntime, SEALED } from "./engines/lib/quickjs/runtime/table.ts";
import { resultEvents } from "./core/events.ts";
import {
  resolveOptions,
  resolveRequest,
  type ResolvedOptions,
  type ResolvedRequest,
  type SandboxOptions,
} from "./options/index.ts";
import {
  ENGINE_INFO,
  LANGUAGES,
  limitOf,
  type EngineName,
  type Language,
  type ResumeOptions,
  type RunRequest,
  type RunResult,
} from "./core/types.ts";

export class Sandbox implements AsyncDisposable {
  readonly options: ResolvedOptions;
  readonly #engines = new Map<EngineName, Promise<Engine>>();
  readonly #registry: EngineRegistry;
  readonly #sessions = new Set<Session>();
  readonly #inFlight = new InFlight();
  #state: "open" | "closing" | "closed" = "open";

  /** Use `createSandbox()`; the constructor does not start any engine. */
  constructor(options: ResolvedOptions, engines: EngineRegistry) {
    this.options = options;
    this.#registry = engines;
  }

  #pythonPackages: readonly string[] | undefined;

  /**
   * The top-level modules of the package library the Python engines mount (found when the sandbox opened), or
   * undefined when there is none (no `wasmcell setup`, `python.packages: false`, or the edge build).
   */
  pythonPackages(): readonly string[] | undefined {
    return this.#pythonPackages;
  }

  /** Starts engines that should be warm before the first run (the Python pool, when asked for). */
  async warm(): Promise<void> {
    if (this.options.python.packages) this.#pythonPackages = await this.#registry.pythonPackages?.();
    if (this.options.python.prewarm) await this.#engine(this.options.python.engine);
  }

  /**
   * Runs code in fresh state. Guest failures (syntax, exceptions, timeouts, memory, crashes) come back
   * as `{ ok: false, error }`; bad requests and use after close throw a `WasmcellError`.
   */
  /**
   * What the JavaScript box provides beyond the language, as one line for a model (from the guest
   * runtime's own table, so it cannot drift from what runs get).
   */
  describeJavaScriptRuntime(): string {
    return describeRuntime(this.options.network ? { network: true } : SEALED);
  }

  async run(request: RunRequest): Promise<RunResult> {
    this.#assertOpen();
    const resolved = resolveRequest(request, this.options);
    const span = traceRun({ ...resolved, network: !!resolved.network, session: false }, request.traceparent);
    const engine = this.#engine(resolved.engine);
    const work = span.within(() => engine.then((e) => e.run(span.wrap(resolved))));
    return this.#track(span.ended(withEvents(work, resolved, engine)));
  }

  /**
   * Opens a stateful session: globals, imports and definitions survive from one run to the next, on
   * purpose. Close it (or `await using` it) when the conversation ends.
   */
  async session(options: { language: Language; engine?: EngineName }): Promise<Session> {
    this.#assertOpen();
    if (typeof options !== "object" || options === null || !LANGUAGES.includes(options.language)) {
      throw new InvalidOptionError("session.language", `must be one of ${LANGUAGES.join(", ")}`);
    }
    // Resolve through the request validator so engine/language rules stay in one place.
    const probe = resolveRequest(
      { language: options.language, code: "", ...(options.engine ? { engine: options.engine } : {}) },
      this.options,
    );
    const engine = await this.#engine(probe.engine);
    if (!engine.openSession) {
      throw new InvalidOptionError("session.engine", `the ${engine.name} engine does not keep state across runs`);
    }
    return this.#adopt(options.language, engine, await engine.openSession());
  }

  /**
   * A live session from `session.snapshot()`'s bytes, in this sandbox (another process or machine too,
   * when both use the same `sessions.key` and engine image). The bytes are authenticated first, then
   * their format, engine and lock are checked, then the state is loaded and proven; anything else is a
   * SnapshotRejectedError whose `reason` says which check failed, and nothing of it remains.
   * `options.reseed` (default true): see ResumeOptions.
   */
  async resume(snapshot: Uint8Array, options: ResumeOptions = {}): Promise<Session> {
    this.#assertOpen();
    if (typeof options !== "object" || options === null)
      throw new InvalidOptionError("resume.options", "must be an object");
    if (options.reseed !== undefined && typeof options.reseed !== "boolean")
      throw new InvalidOptionError("resume.reseed", "must be a boolean");
    // From the registry: the reader needs node:crypto, and the edge entry loads this file too.
    if (!this.#registry.snapshots)
      throw new SnapshotRejectedError("engine", "this build of wasmcell (the edge entry) does not resume sessions");
    const { openSnapshot, checkMadeFor } = await this.#registry.snapshots();
    const { header, state } = openSnapshot(this.options.sessions.key, snapshot, this.options.sessions.maxSnapshotBytes);
    const engine = await this.#engine(header.engine);
    if (!engine.snapshotHeader || !engine.resumeSession)
      throw new SnapshotRejectedError("engine", `the ${engine.name} engine here does not resume sessions`);
    checkMadeFor(header, await engine.snapshotHeader());
    const inner = await engine.resumeSession(state, snapshot.length, header, options);
    return this.#adopt(header.language, engine, inner);
  }

  #adopt(language: Language, engine: Engine, inner: EngineSession): Session {
    const session = new Session(this, language, engine, inner, () => this.#sessions.delete(session));
    this.#sessions.add(session);
    return session;
  }

  /** @internal used by Session.fork */
  adopt(language: Language, engine: Engine, inner: EngineSession): Session {
    return this.#adopt(language, engine, inner);
  }

  /** Waits for in-flight runs, closes sessions and engines. Runs after this throw `CLOSED`. */
  async close(): Promise<void> {
    if (this.#state !== "open") return;
    this.#state = "closing";
    await this.#inFlight.drain();
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    const engines = await Promise.allSettled([...this.#engines.values()]);
    await Promise.allSettled(engines.flatMap((e) => (e.status === "fulfilled" ? [e.value.close()] : [])));
    this.#state = "closed";
  }

  /** Stops everything now: in-flight runs end, sidecars are killed. */
  async destroy(): Promise<void> {
    this.#state = "closed";
    const engines = await Promise.allSettled([...this.#engines.values()]);
    await Promise.allSettled(engines.flatMap((e) => (e.status === "fulfilled" ? [e.value.destroy()] : [])));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** @internal used by Session */
  assertOpen(): void {
    this.#assertOpen();
  }

  /** @internal used by Session */
  track<T>(work: Promise<T>): Promise<T> {
    return this.#track(work);
  }

  #assertOpen(): void {
    if (this.#state !== "open") throw new ClosedError("sandbox");
  }

  #track<T>(work: Promise<T>): Promise<T> {
    return this.#inFlight.track(work);
  }

  #engine(name: EngineName): Promise<Engine> {
    let engine = this.#engines.get(name);
    if (!engine) {
      // Outside the caller's trace context: the engine and its pools outlive the run that started them.
      engine = untraced(() => this.#registry[name]().then((m) => m.createEngine(this.options)));
      // A failed start is not cached: the next run tries again (and throws the same clear error).
      engine.catch(() => this.#engines.delete(name));
      this.#engines.set(name, engine);
    }
    return engine;
  }
}

/** A stateful conversation with one interpreter. */
export class Session implements AsyncDisposable {
  readonly language: Language;
  readonly engine: EngineName;
  readonly #sandbox: Sandbox;
  readonly #engine: Engine;
  readonly #inner: EngineSession;
  readonly #onClose: () => void;
  #closed = false;

  constructor(sandbox: Sandbox, language: Language, engine: Engine, inner: EngineSession, onClose: () => void) {
    this.#sandbox = sandbox;
    this.language = language;
    this.engine = engine.name;
    this.#engine = engine;
    this.#inner = inner;
    this.#onClose = onClose;
  }

  /** Runs code in this session; `language` and `engine` default to the session's. */
  async run(request: Omit<RunRequest, "language" | "engine"> & { language?: Language }): Promise<RunResult> {
    if (this.#closed) throw new ClosedError("session");
    this.#sandbox.assertOpen();
    if (request.language !== undefined && request.language !== this.language) {
      throw new InvalidOptionError("request.language", `this session runs ${this.language}`);
    }
    const resolved = resolveRequest(
      { ...request, language: this.language, engine: this.engine },
      this.#sandbox.options,
    );
    const span = traceRun({ ...resolved, network: !!resolved.network, session: true }, request.traceparent);
    const work = span.within(() => this.#inner.run(span.wrap(resolved)));
    return this.#sandbox.track(span.ended(withEvents(work, resolved, this.#engine)));
  }

  /**
   * The session's whole state as bytes: versioned, compressed, authenticated with `sessions.key`
   * (`sandbox.resume(bytes)` takes them back). The session carries on unchanged. Throws
   * SnapshotUnsupportedError when it cannot be taken: a native Python session is a real process
   * (reason "native"); a session holding an open file or a loaded C extension ("state"); a JavaScript
   * session of the edge build ("engine").
   */
  async snapshot(): Promise<Uint8Array> {
    if (this.#closed) throw new ClosedError("session");
    this.#sandbox.assertOpen();
    if (!this.#inner.snapshot) throw unsupported(this.engine);
    return this.#sandbox.track(this.#inner.snapshot(this.language));
  }

  /**
   * A new session holding a copy of this one's state, independent from here on (neither sees the
   * other's later writes: memory, files, modules). The copy never leaves this process.
   */
  async fork(): Promise<Session> {
    if (this.#closed) throw new ClosedError("session");
    this.#sandbox.assertOpen();
    if (!this.#inner.fork) throw unsupported(this.engine);
    const fork = this.#inner.fork.bind(this.#inner);
    const attributes = { "wasmcell.engine": this.engine, "wasmcell.language": this.language } as const;
    const inner = await this.#sandbox.track(traceCall(SPANS.fork, attributes, fork));
    return this.#sandbox.adopt(this.language, this.#engine, inner);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose();
    await this.#inner.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

function unsupported(engine: EngineName): SnapshotUnsupportedError {
  return !ENGINE_INFO[engine].snapshots
    ? new SnapshotUnsupportedError(
        "native",
        "a native Python session is a real process (its state is the process, not data): it cannot be snapshotted, forked or resumed; use the pyodide engine for sessions that must",
      )
    : new SnapshotUnsupportedError("engine", `the ${engine} engine's sessions cannot be snapshotted`);
}

/**
 * The front door's last word on every result: a failure names the limit that fired (limitOf: the
 * kind's limit, or the output cap its producer named; nothing else), and what the result tells (that
 * limit, denials, and restarts unless the engine reports its own) goes to the event channel.
 */
function withEvents(
  work: Promise<RunResult>,
  request: ResolvedRequest,
  engine: Engine | Promise<Engine>,
): Promise<RunResult> {
  const emit = request.emit;
  return Promise.all([work, engine]).then(([result, e]) => {
    if (!result.ok) {
      const limit = limitOf(result.error, result.stats.engine);
      if (limit === undefined) delete result.error.limit;
      else result.error.limit = limit;
    }
    if (emit) resultEvents(result, request.limits, emit, e.reportsRestarts !== true);
    return result;
  });
}

/** `createSandbox` of an entry (src/index.ts, src/edge.ts), with that entry's engines. */
export async function openSandbox(engines: EngineRegistry, options?: SandboxOptions): Promise<Sandbox> {
  const sandbox = new Sandbox(resolveOptions(options), engines);
  try {
    await sandbox.warm();
  } catch (error) {
    await sandbox.destroy();
    throw error;
  }
  return sandbox;
}

/** `run` of an entry: create a sandbox, run one request, close it. */
export async function runOnce(
  engines: EngineRegistry,
  request: RunRequest,
  options?: SandboxOptions,
): Promise<RunResult> {
  const sandbox = new Sandbox(resolveOptions(options), engines);
  try {
    return await sandbox.run(request);
  } finally {
    await sandbox.close();
  }
}
