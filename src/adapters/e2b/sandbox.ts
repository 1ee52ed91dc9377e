// `wasmcell/e2b`'s Sandbox: `@e2b/code-interpreter`'s client API over a local wasmcell sandbox.
// E2B runs a Jupyter kernel per context in a remote VM; here a context is a wasmcell session (the
// same statefulness: variables, imports and definitions stay from one run to the next), and the
// sandbox's files are a host-side workspace every run is handed (./files.ts). It translates and
// nothing more: the runs go through the public `Sandbox`/`Session` API, with its limits, seal and
// verdicts. What only a remote VM has (templates, public URLs, shell commands, pausing and
// reconnecting) throws a NotSupportedError that says so, at the call.

import { randomUUID } from "node:crypto";
import {
  ClosedError,
  EngineUnavailableError,
  InvalidOptionError,
  NotSupportedError,
  WorkspaceError,
} from "../../core/errors.ts";
import { ENGINE_INFO, type EngineInfo, type Language, type Limits, type PythonEngine } from "../../core/types.ts";
import { createSandbox } from "../../index.ts";
import { Sandbox as WasmcellSandbox, type Session } from "../../sandbox.ts";
import { Workspace } from "../ai/workspace.ts";
import {
  cellCode,
  checkCreateOpts,
  checkRunCodeOpts,
  languageOf,
  type Context,
  type CreateOpts,
  type RunCodeOpts,
} from "./opts.ts";
import { Filesystem, HOME } from "./files.ts";
import { Execution, ExecutionError, OutputMessage, toResult, valueResult } from "./messaging.ts";

/** What `getInfo()` tells. */
export interface SandboxInfo {
  sandboxId: string;
  /** Always `wasmcell`: there are no templates. */
  templateId: string;
  metadata: Record<string, string>;
  startedAt: Date;
}

/** E2B's default for how long one `runCode` may take. */
export const DEFAULT_RUN_TIMEOUT_MS = 60_000;

interface ContextState {
  readonly context: Context;
  readonly language: Language;
  session: Promise<Session> | undefined;
  count: number;
}

const remote = (what: string): NotSupportedError =>
  new NotSupportedError(
    what,
    "a wasmcell/e2b sandbox lives in this process, not on a server: it has no id to connect to, no public host and no other client",
  );

export class Sandbox implements AsyncDisposable {
  /** A random id (nothing can connect to it: it names this object in logs). */
  readonly sandboxId = `wasmcell-${randomUUID()}`;
  /** The sandbox's files, shared by all its contexts. */
  readonly files: Filesystem;
  /** Shell commands: none here (every method throws NotSupportedError). */
  readonly commands = {
    run: commandsUnsupported,
    list: commandsUnsupported,
    kill: commandsUnsupported,
    connect: commandsUnsupported,
    sendStdin: commandsUnsupported,
  };
  /** Terminals: none here (every method throws NotSupportedError). */
  readonly pty = { create: ptyUnsupported, kill: ptyUnsupported, resize: ptyUnsupported, sendInput: ptyUnsupported };
  /** The wasmcell sandbox the runs go through. */
  readonly wasmcell: WasmcellSandbox;

  readonly #owns: boolean;
  readonly #limits: Partial<Limits>;
  readonly #pythonEngine: "auto" | PythonEngine;
  readonly #workspace: Workspace;
  readonly #contexts = new Map<string, ContextState>();
  readonly #defaults = new Map<Language, ContextState>();
  readonly #metadata: Record<string, string>;
  readonly #startedAt = new Date();
  #python: PythonEngine | undefined;
  #lifetime: ReturnType<typeof setTimeout> | undefined;
  #killed = false;

  private constructor(wasmcell: WasmcellSandbox, owns: boolean, opts: CreateOpts) {
    this.wasmcell = wasmcell;
    this.#owns = owns;
    this.#limits = { timeoutMs: DEFAULT_RUN_TIMEOUT_MS, ...opts.limits };
    this.#pythonEngine = opts.pythonEngine ?? "auto";
    this.#metadata = { ...opts.metadata };
    const maxBytes = this.#limits.maxFileBytes ?? wasmcell.options.limits.maxFileBytes;
    this.#workspace = new Workspace(HOME, { maxBytes, maxEntries: opts.maxWorkspaceEntries ?? 1000 });
    this.files = new Filesystem(this.#workspace, maxBytes, () => this.#assertAlive());
    for (const language of ["python", "javascript"] as const) this.#defaultContext(language);
    if (opts.timeoutMs !== undefined) this.setTimeout(opts.timeoutMs);
  }

  /**
   * A new sandbox (E2B's `Sandbox.create(opts)`). It starts a wasmcell sandbox of its own (with
   * `opts.sandboxOptions`), closed by `kill()`, or uses `opts.sandbox`, which it leaves open. A
   * template (`Sandbox.create("name")`) throws NotSupportedError; so do options with no meaning here
   * (see CreateOpts).
   */
  static async create(templateOrOpts?: string | CreateOpts, maybeOpts?: CreateOpts): Promise<Sandbox> {
    if (typeof templateOrOpts === "string")
      throw new NotSupportedError(
        `template ${JSON.stringify(templateOrOpts)}`,
        "there are no sandbox templates: every sandbox runs the same engines (Python, JavaScript, TypeScript) with the package library `wasmcell setup` installed",
      );
    const opts = checkCreateOpts(templateOrOpts ?? maybeOpts ?? {});
    if (opts.sandbox !== undefined) {
      if (!(opts.sandbox instanceof WasmcellSandbox))
        throw new InvalidOptionError("sandbox", "must be a wasmcell Sandbox (from createSandbox())");
      return new Sandbox(opts.sandbox, false, opts);
    }
    return new Sandbox(await createSandbox(opts.sandboxOptions), true, opts);
  }

  /** Nothing to connect to: sandboxes live in the process that made them. */
  static connect(_sandboxId?: string): Promise<never> {
    return later(() => {
      throw remote("Sandbox.connect");
    });
  }
  static list(): Promise<never> {
    return later(() => {
      throw remote("Sandbox.list");
    });
  }
  static kill(_sandboxId?: string): Promise<never> {
    return later(() => {
      throw remote("Sandbox.kill(sandboxId) (call kill() on the sandbox object)");
    });
  }
  static resume(_sandboxId?: string): Promise<never> {
    return later(() => {
      throw remote("Sandbox.resume");
    });
  }

  /**
   * Runs code in a context (the language's default one unless `context` is given) and returns what it
   * printed, displayed and raised. Failures of the code are `execution.error`, never thrown; a bad
   * option, an unsupported language, a killed sandbox or a callback that throws reject the call.
   */
  async runCode(code: string, opts: RunCodeOpts = {}): Promise<Execution> {
    this.#assertAlive();
    if (typeof code !== "string") throw new InvalidOptionError("code", "must be a string");
    checkRunCodeOpts(opts);
    const state = opts.context ? this.#lookup(opts.context) : this.#defaultContext(languageOf(opts.language));
    const session = await this.#session(state);

    const execution = new Execution();
    const pending: Promise<unknown>[] = [];
    let thrown: { error: unknown } | undefined;
    const call = <T>(callback: ((arg: T) => unknown) | undefined, arg: T): void => {
      if (!callback || thrown) return;
      try {
        const out = callback(arg);
        if (out instanceof Promise) {
          // Marked handled now: it is awaited only after the run, and may reject before that.
          out.catch(() => {});
          pending.push(out);
        }
      } catch (error) {
        thrown = { error };
      }
    };
    // E2B's messages are lines: an engine may stream a line in pieces (Python's print writes the
    // text, then the newline), so pieces are joined up to each newline; a last partial line is
    // sent when the run ends.
    const lines = new LineJoiner((error, line) => {
      (error ? execution.logs.stderr : execution.logs.stdout).push(line);
      call(error ? opts.onStderr : opts.onStdout, new OutputMessage(line, Date.now() * 1000, error));
    });
    const r = await session.run({
      code: cellCode(code, state.language),
      files: this.#workspace.filesUnder(""),
      limits: { ...this.#limits, ...(opts.timeoutMs === undefined ? {} : { timeoutMs: opts.timeoutMs }) },
      ...(opts.signal ? { signal: opts.signal } : {}),
      onOutput: (chunk) => lines.add(chunk.stream === "stderr", chunk.text),
      // Display items reach onResult as they happen; the main result made from the value comes last.
      onResult: (item) => call(opts.onResult, toResult(item)),
    });
    state.count++;
    execution.executionCount = state.count;
    lines.flush();
    // Output that did not stream (an engine, or a run's end, that delivers it whole) still reaches
    // the logs and the callbacks, once.
    if (execution.logs.stdout.length === 0 && r.stdout !== "") {
      execution.logs.stdout.push(r.stdout);
      call(opts.onStdout, new OutputMessage(r.stdout, Date.now() * 1000, false));
    }
    if (execution.logs.stderr.length === 0 && r.stderr !== "") {
      execution.logs.stderr.push(r.stderr);
      call(opts.onStderr, new OutputMessage(r.stderr, Date.now() * 1000, true));
    }
    execution.results = r.results.map(toResult);
    if (r.ok && !execution.results.some((x) => x.isMainResult)) {
      const main = valueResult(r.value, r.language);
      if (main) {
        execution.results.push(main);
        call(opts.onResult, main);
      }
    }
    const notKept = this.#keepFiles(r.files);
    if (notKept !== undefined) {
      execution.logs.stderr.push(notKept);
      call(opts.onStderr, new OutputMessage(notKept, Date.now() * 1000, true));
    }
    if (!r.ok) {
      execution.error = ExecutionError.from(r.error);
      call(opts.onError, execution.error);
    }
    await Promise.all(pending);
    if (thrown) throw thrown.error;
    return execution;
  }

  /**
   * A new context: a fresh interpreter of its own, which shares nothing with the others but the
   * sandbox's files. `cwd` may only be `/home/user` (the one working directory here).
   */
  createCodeContext(opts: { language?: string; cwd?: string; requestTimeoutMs?: number } = {}): Promise<Context> {
    return later(() => {
      this.#assertAlive();
      if (typeof opts !== "object" || opts === null)
        throw new InvalidOptionError("createCodeContext", "takes an options object");
      if (opts.cwd !== undefined && opts.cwd !== HOME && opts.cwd !== `${HOME}/`)
        throw new NotSupportedError(
          `cwd ${JSON.stringify(opts.cwd)}`,
          `every context works in ${HOME}, the sandbox's workspace (files.write puts files there; relative paths in code reach them)`,
        );
      return { ...this.#newContext(languageOf(opts.language)).context };
    });
  }

  listCodeContexts(): Promise<Context[]> {
    return later(() => {
      this.#assertAlive();
      return [...this.#contexts.values()].map((s) => ({ ...s.context }));
    });
  }

  /** Ends a context's interpreter; its id runs nothing after this. */
  async removeCodeContext(context: Context | string): Promise<void> {
    this.#assertAlive();
    const state = this.#lookup(context);
    this.#contexts.delete(state.context.id);
    if (this.#defaults.get(state.language) === state) this.#defaults.delete(state.language);
    await closeSession(state);
  }

  /** Starts a context's interpreter afresh: same id, no variables. */
  async restartCodeContext(context: Context | string): Promise<void> {
    this.#assertAlive();
    const state = this.#lookup(context);
    await closeSession(state);
    state.count = 0;
  }

  /**
   * The Python engine this sandbox's Python contexts run on, once one has run (`undefined` before):
   * `native` where the host's Python keeps sessions and can run here, else `pyodide`.
   */
  get pythonEngine(): PythonEngine | undefined {
    return this.#python;
  }

  /** Ends the sandbox: its contexts, and the wasmcell sandbox when this one created it. */
  async kill(): Promise<void> {
    if (this.#killed) return;
    this.#killed = true;
    if (this.#lifetime) clearTimeout(this.#lifetime);
    const states = [...this.#contexts.values()];
    this.#contexts.clear();
    this.#defaults.clear();
    await Promise.allSettled(states.map(closeSession));
    if (this.#owns) await this.wasmcell.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.kill();
  }

  isRunning(): Promise<boolean> {
    return Promise.resolve(!this.#killed);
  }

  /** Kills the sandbox `timeoutMs` from now (replacing an earlier timer), as E2B's sandbox timeout. */
  setTimeout(timeoutMs: number): void {
    this.#assertAlive();
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0)
      throw new InvalidOptionError("timeoutMs", "must be a positive integer of milliseconds");
    if (this.#lifetime) clearTimeout(this.#lifetime);
    this.#lifetime = setTimeout(() => {
      this.kill().catch(() => {});
    }, timeoutMs);
    // The timer kills the sandbox if the process is still running then; it does not keep it running.
    this.#lifetime.unref?.();
  }

  getInfo(): Promise<SandboxInfo> {
    return later(() => {
      this.#assertAlive();
      return {
        sandboxId: this.sandboxId,
        templateId: "wasmcell",
        metadata: { ...this.#metadata },
        startedAt: this.#startedAt,
      };
    });
  }

  getHost(_port?: number): never {
    throw new NotSupportedError("getHost", "code here has no network listener and the sandbox has no public address");
  }
  pause(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw remote("pause");
    });
  }
  betaPause(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw remote("betaPause");
    });
  }
  getMetrics(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw new NotSupportedError(
        "getMetrics",
        "each run reports its own in wasmcell's RunResult.stats and events (createSandbox's onEvent)",
      );
    });
  }
  uploadUrl(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw remote("uploadUrl");
    });
  }
  downloadUrl(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw remote("downloadUrl");
    });
  }

  #assertAlive(): void {
    if (this.#killed) throw new ClosedError("sandbox (killed)");
  }

  #newContext(language: Language): ContextState {
    const state: ContextState = {
      context: { id: randomUUID(), language, cwd: HOME },
      language,
      session: undefined,
      count: 0,
    };
    this.#contexts.set(state.context.id, state);
    return state;
  }

  #defaultContext(language: Language): ContextState {
    let state = this.#defaults.get(language);
    if (!state) {
      state = this.#newContext(language);
      this.#defaults.set(language, state);
    }
    return state;
  }

  /** A context of this sandbox, by id: a context of another sandbox (or a removed one) is not found. */
  #lookup(context: Context | string): ContextState {
    const id =
      typeof context === "string" ? context : typeof context === "object" && context !== null ? context.id : undefined;
    const state = typeof id === "string" ? this.#contexts.get(id) : undefined;
    if (!state)
      throw new InvalidOptionError(
        "context",
        `no context ${JSON.stringify(id)} in this sandbox (removed, or made by another sandbox)`,
      );
    return state;
  }

  #session(state: ContextState): Promise<Session> {
    if (!state.session) {
      const opening =
        state.language === "python" ? this.#openPython() : this.wasmcell.session({ language: state.language });
      // A failed open is not kept: the next run tries again (and throws the same clear error).
      opening.catch(() => {
        if (state.session === opening) state.session = undefined;
      });
      state.session = opening;
    }
    return state.session;
  }

  /**
   * Python on the native tier (the host's CPython with numpy, pandas and matplotlib, which E2B users'
   * code expects) when it keeps sessions and can run on this machine; else Pyodide. Only an engine
   * that cannot run here (EngineUnavailableError) falls back: a seal layer that cannot be set up
   * fails the run, as everywhere in wasmcell. `pythonEngine` says which was chosen.
   */
  async #openPython(): Promise<Session> {
    const choice = this.#python ?? this.#pythonEngine;
    if (choice !== "auto") {
      const session = await this.wasmcell.session({ language: "python", engine: choice });
      this.#python = choice;
      return session;
    }
    if ((ENGINE_INFO.native as EngineInfo).sessions) {
      try {
        const session = await this.wasmcell.session({ language: "python", engine: "native" });
        this.#python = "native";
        return session;
      } catch (error) {
        if (!(error instanceof EngineUnavailableError)) throw error;
      }
    }
    const session = await this.wasmcell.session({ language: "python", engine: "pyodide" });
    this.#python = "pyodide";
    return session;
  }

  /**
   * The files a run wrote, into the workspace (all or none). When they do not fit its caps, the line
   * to add to the run's stderr: the run happened, so its result is returned, and the loss is said.
   */
  #keepFiles(files: readonly { path: string; bytes: Uint8Array }[]): string | undefined {
    if (files.length === 0) return undefined;
    try {
      this.#workspace.writeAll(files.map((f) => [this.#workspace.resolve(f.path), f.bytes] as const));
      return undefined;
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      return `wasmcell/e2b: the files this run wrote were not kept in the sandbox's files: ${error.message}\n`;
    }
  }
}

/** `fn`'s value as a promise, or its throw as a rejection (E2B's calls are all asynchronous). */
function later<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}

async function closeSession(state: ContextState): Promise<void> {
  const session = state.session;
  state.session = undefined;
  if (session) await session.then((s) => s.close()).catch(() => {});
}

function commandsUnsupported(..._args: unknown[]): Promise<never> {
  return Promise.reject(
    new NotSupportedError(
      "commands",
      "there is no shell or operating system to run commands in: code runs in WebAssembly interpreters (and a jailed Python), through runCode",
    ),
  );
}

function ptyUnsupported(..._args: unknown[]): Promise<never> {
  return Promise.reject(new NotSupportedError("pty", "there is no terminal or shell: code runs through runCode"));
}

/** Joins streamed pieces into lines per stream (stdout, stderr), each sent once it is whole. */
class LineJoiner {
  readonly #pending = { out: "", err: "" };
  readonly #send: (error: boolean, line: string) => void;
  constructor(send: (error: boolean, line: string) => void) {
    this.#send = send;
  }
  add(error: boolean, text: string): void {
    const key = error ? "err" : "out";
    let rest = this.#pending[key] + text;
    for (let nl = rest.indexOf("\n"); nl >= 0; nl = rest.indexOf("\n")) {
      this.#send(error, rest.slice(0, nl + 1));
      rest = rest.slice(nl + 1);
    }
    this.#pending[key] = rest;
  }
  flush(): void {
    for (const error of [false, true]) {
      const key = error ? "err" : "out";
      if (this.#pending[key] !== "") this.#send(error, this.#pending[key]);
      this.#pending[key] = "";
    }
  }
}
