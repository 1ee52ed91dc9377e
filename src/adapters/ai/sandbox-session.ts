// The AI SDK's sandbox interface (`Experimental_SandboxSession`, passed as `experimental_sandbox` to
// generateText/streamText/agents and handed to every tool's `execute`) over a wasmcell sandbox.
//
// A session is a workspace — an in-memory file tree under one base directory, kept on the host with
// caps — plus a command line that runs `python`/`node`/`tsx` programs as wasmcell runs over it (see
// ./commands.ts). There is no shell and no host process: a command is one program with its arguments,
// and shell syntax that needs a real shell (pipes, `&&`, `$VAR`, globs) is refused with exit code 2.
//
// Why not a shell emulator (vercel-labs' just-bash was the candidate): it runs its interpreter in the
// host realm and, for its defence in depth, patches host globals (Function, setTimeout, process) while
// scripts run — under wasmcell's own worker pools and timers — and its result comes back only when the
// whole script ends, so `spawn` could not stream. Its 16 dependencies (an HTTP client, sql.js, a second
// QuickJS) would also ship with every install. A simple-command parser covers what agents run.

import type { Experimental_SandboxProcess, Experimental_SandboxSession } from "ai";
import { InvalidOptionError, WorkspaceError } from "../../core/errors.ts";
import { makeOffer } from "../../options/index.ts";
import { Sandbox } from "../../sandbox.ts";
import type { FileInput, Limits, PythonEngine } from "../../core/types.ts";
import { EXIT, runCommandLine, type CommandContext, type Stream } from "./commands.ts";
import { Workspace } from "./workspace.ts";

type ProcessOptions = Parameters<Experimental_SandboxSession["run"]>[0];
type SpawnOptions = ProcessOptions & { stdin?: boolean };

export interface SandboxSessionOptions {
  /** The wasmcell sandbox that runs the programs. The application creates and closes it. */
  sandbox: Sandbox;
  /** The session's base directory: where commands start and relative paths resolve. */
  baseDirectory?: string;
  /** Files the workspace starts with (paths relative to the base directory). */
  files?: Record<string, FileInput>;
  /** Per-run limit overrides for every program a command runs (deadline, memory, output…). */
  limits?: Partial<Limits>;
  /** The engine for Python programs. Defaults to the sandbox's `python.engine`. */
  pythonEngine?: PythonEngine;
  /** Cap on all workspace file bytes. Defaults to the sandbox's `limits.maxFileBytes`, so every run can be handed the whole workspace. */
  maxWorkspaceBytes?: number;
  /** Cap on workspace files and directories together. @defaultValue 1000 */
  maxWorkspaceEntries?: number;
  /**
   * What a bare `cd DIR` command does. `"session"`: the session's next commands that give no
   * `workingDirectory` start in DIR, as in a terminal (what a model that types `cd` expects);
   * `"command"`: it affects only its own command line, the letter of the AI SDK's interface ("changing
   * the directory inside a command only affects that command"), so `cd` alone changes nothing. Either
   * way relative paths of the file methods and of `workingDirectory` resolve against the base directory.
   * @defaultValue "session"
   */
  cd?: "session" | "command";
}

const encoder = new TextEncoder();

/** A sandbox session for the AI SDK: pass it as `experimental_sandbox`. */
export function createSandboxSession(options: SandboxSessionOptions): Experimental_SandboxSession {
  if (typeof options !== "object" || options === null || !(options.sandbox instanceof Sandbox)) {
    throw new InvalidOptionError("sandbox", "must be a wasmcell Sandbox (from createSandbox())");
  }
  const { sandbox } = options;
  if (options.cd !== undefined && options.cd !== "session" && options.cd !== "command") {
    throw new InvalidOptionError("cd", `must be "session" or "command", not ${JSON.stringify(options.cd)}`);
  }
  const cdPersists = options.cd !== "command";
  for (const field of ["maxWorkspaceBytes", "maxWorkspaceEntries"] as const) {
    const value = options[field];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InvalidOptionError(field, "must be a non-negative integer");
    }
  }
  // The model writes the command lines: what their runs may use is the application's, checked once here.
  const offer = makeOffer({ sandbox: sandbox.options, limits: options.limits, pythonEngine: options.pythonEngine });
  const workspace = new Workspace(options.baseDirectory ?? "/workspace", {
    maxBytes: options.maxWorkspaceBytes ?? sandbox.options.limits.maxFileBytes,
    maxEntries: options.maxWorkspaceEntries ?? 1000,
  });
  const initial = Object.entries(options.files ?? {}).map(
    ([path, content]) =>
      [workspace.resolve(path), typeof content === "string" ? encoder.encode(content) : content] as const,
  );
  workspace.writeAll(initial);
  /**
   * The session's working directory (a workspace key), where a command without `workingDirectory`
   * starts; `cd` moves it, as a shell's does for its next commands. `old` is where `cd -` goes.
   */
  const dirs: { cwd: string; old: string | undefined } = { cwd: "", old: undefined };

  /** Starts one command line; output goes to `write` as it comes. */
  const start = (call: ProcessOptions, write: (stream: Stream, text: string) => void) => {
    const { command, abortSignal } = checkProcess(call);
    let cwd: string;
    if (call.workingDirectory !== undefined) {
      // Relative to the base directory, as the AI SDK's interface says of every relative path.
      cwd = workspace.resolve(call.workingDirectory);
      if (workspace.typeOf(cwd) !== "directory") {
        throw new WorkspaceError(call.workingDirectory, "the working directory does not exist");
      }
    } else if (workspace.typeOf(dirs.cwd) === "directory") cwd = dirs.cwd;
    else {
      // The directory a `cd` went to was removed since (`rm -r`): bash would stay in a directory that
      // is gone; here the session goes back to its base and says so.
      write(
        "stderr",
        `wasmcell: the working directory ${workspace.absolute(dirs.cwd)} no longer exists; back in ${workspace.base}\n`,
      );
      dirs.cwd = cwd = "";
    }
    const killer = new AbortController();
    let finished = false;
    let killed = false;
    const ctx: CommandContext = {
      sandbox,
      workspace,
      cwd,
      chdir: (key) => {
        if (!cdPersists) return;
        dirs.old = cwd; // bash's OLDPWD: where this command was, a workingDirectory included
        dirs.cwd = key;
      },
      oldCwd: dirs.old,
      env: { ...call.env },
      offer,
      signal: abortSignal ? AbortSignal.any([killer.signal, abortSignal]) : killer.signal,
      write,
    };
    const exit = (async () => {
      abortSignal?.throwIfAborted();
      const code = await runCommandLine(command, ctx);
      finished = true;
      // The AI SDK's contract: an aborted command rejects with the abort reason.
      abortSignal?.throwIfAborted();
      return killed ? EXIT.killed : code;
    })();
    const kill = (): void => {
      if (finished) return;
      killed = true;
      killer.abort();
    };
    return { exit, kill };
  };

  const spawn = (call: SpawnOptions): Promise<Experimental_SandboxProcess> =>
    attempt(undefined, () => {
      if (call?.stdin === true) {
        throw new InvalidOptionError(
          "spawn.stdin",
          "standard input is not supported: pass input as files or arguments",
        );
      }
      const out = pushStream();
      const err = pushStream();
      const { exit, kill } = start(call, (stream, text) => (stream === "stdout" ? out : err).push(text));
      const settled = exit.finally(() => {
        out.close();
        err.close();
      });
      settled.catch(() => {}); // observed by wait(); never an unhandled rejection
      return {
        stdout: out.stream,
        stderr: err.stream,
        wait: () => settled.then((exitCode) => ({ exitCode })),
        kill: async () => {
          kill();
          await settled.catch(() => {});
        },
      };
    });

  const readBinaryFile = (o: PathCall) => attempt(o, () => workspace.read(workspace.resolve(o.path), o.path));
  const writeBinaryFile = (o: PathCall & { content: Uint8Array }) =>
    attempt(o, () => {
      if (!(o.content instanceof Uint8Array)) {
        throw new InvalidOptionError("writeBinaryFile.content", "must be a Uint8Array");
      }
      workspace.write(workspace.resolve(o.path), o.content, o.path);
    });

  return {
    description: describe(workspace.base, cdPersists),
    run: async (call) => {
      let stdout = "";
      let stderr = "";
      const { exit } = start(call, (stream, text) => {
        if (stream === "stdout") stdout += text;
        else stderr += text;
      });
      const exitCode = await exit;
      return { exitCode, stdout, stderr };
    },
    // Typed for the no-stdin overloads only: a call with `stdin: true` is rejected before it starts.
    spawn: spawn as unknown as Experimental_SandboxSession["spawn"],
    readBinaryFile,
    readFile: async (o) => {
      const bytes = await readBinaryFile(o);
      return bytes === null ? null : new Response(bytes).body!;
    },
    readTextFile: async ({ encoding = "utf-8", startLine, endLine, ...o }) => {
      const bytes = await readBinaryFile(o);
      if (bytes === null) return null;
      const text = new TextDecoder(encoding).decode(bytes);
      if (startLine === undefined && endLine === undefined) return text;
      for (const [name, n] of [
        ["startLine", startLine],
        ["endLine", endLine],
      ] as const) {
        if (n !== undefined && (!Number.isSafeInteger(n) || n < 1)) {
          throw new InvalidOptionError(`readTextFile.${name}`, "must be a positive integer (lines count from 1)");
        }
      }
      // Each line keeps its terminator, so a range reads back exactly as it is in the file.
      return text
        .split(/(?<=\n)/)
        .slice((startLine ?? 1) - 1, endLine)
        .join("");
    },
    writeBinaryFile,
    writeTextFile: async ({ encoding, content, ...o }) => {
      if (encoding !== undefined && !/^utf-?8$/i.test(encoding)) {
        throw new InvalidOptionError(
          "writeTextFile.encoding",
          `only utf-8 is supported, not ${JSON.stringify(encoding)}`,
        );
      }
      if (typeof content !== "string") throw new InvalidOptionError("writeTextFile.content", "must be a string");
      await writeBinaryFile({ ...o, content: encoder.encode(content) });
    },
    writeFile: async ({ content, ...o }) => {
      const key = workspace.resolve(o.path);
      const cap = options.maxWorkspaceBytes ?? sandbox.options.limits.maxFileBytes;
      const chunks: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of content) {
        o.abortSignal?.throwIfAborted();
        size += chunk.byteLength;
        // Stop reading a stream that can never fit, instead of buffering all of it first.
        if (size > cap) throw new WorkspaceError(o.path, `the file is over the workspace's ${cap}-byte cap`);
        chunks.push(chunk);
      }
      await writeBinaryFile({ ...o, path: workspace.absolute(key), content: join(chunks, size) });
    },
    stat: (o) => attempt(o, () => workspace.stat(workspace.resolve(o.path))),
    listDirectory: (o) => attempt(o, () => workspace.list(workspace.resolve(o.path), o.path)),
    deleteFile: (o) => attempt(o, () => workspace.deleteFile(workspace.resolve(o.path), o.path)),
  };
}

interface PathCall {
  path: string;
  abortSignal?: AbortSignal;
}

/** Runs a synchronous file operation as a promise: a throw (or an aborted signal) is a rejection. */
function attempt<T>(call: { abortSignal?: AbortSignal | undefined } | undefined, work: () => T): Promise<T> {
  return new Promise((resolve) => {
    call?.abortSignal?.throwIfAborted();
    resolve(work());
  });
}

function checkProcess(call: ProcessOptions): ProcessOptions & { command: string } {
  if (typeof call !== "object" || call === null || typeof call.command !== "string") {
    throw new InvalidOptionError("command", "must be a string");
  }
  for (const [name, value] of Object.entries(call.env ?? {})) {
    if (typeof value !== "string") throw new InvalidOptionError(`env.${name}`, "must be a string");
  }
  return call;
}

function describe(base: string, cdPersists: boolean): string {
  return [
    `A wasmcell sandbox: programs run in WebAssembly, with no network and no shell. Files live in ${base}, kept across commands (relative paths start there).`,
    "Commands: python/python3 (-c CODE, or FILE.py [args]); node, tsx (-e CODE, or FILE.js/FILE.ts; JavaScript has no require or npm packages — read and write files with the global fs, relative paths; process has only cwd(), argv and env); echo, cat, ls [-1aAdlhrtS], head/tail [-n N] [-c N], wc [-lwmc], pwd, cd, mkdir [-p], rm [-rf].",
    `One program per command: no pipes, &&, ;, $VARIABLES or globs; '> file', '>> file', '2>&1' and '2>/dev/null' work. No pip or npm installs.${cdPersists ? " cd changes the directory for the next commands." : ""}`,
  ].join("\n");
}

function pushStream(): { stream: ReadableStream<Uint8Array>; push: (text: string) => void; close: () => void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let open = true;
  const stream = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    cancel: () => {
      open = false;
    },
  });
  return {
    stream,
    push: (text) => {
      if (open && text.length > 0) controller.enqueue(encoder.encode(text));
    },
    close: () => {
      if (open) controller.close();
      open = false;
    },
  };
}

function join(chunks: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
