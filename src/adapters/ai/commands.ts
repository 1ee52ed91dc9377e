// What a sandbox session's command line runs: `python`/`python3`, `node`/`tsx`/`ts-node` as wasmcell
// runs over the workspace, and a few file built-ins (echo, cat, ls, pwd, cd, mkdir, rm, true, false).
// No host process is ever started. Anything else answers as bash does for an unknown program: exit 127
// and "<name>: command not found".
//
// A run is handed the files under its working directory (so `..` cannot reach above it, as nothing can
// reach above the base directory) and the files it wrote come back into the workspace — only when it
// succeeds: a run that fails returns no files, so a failed command leaves the workspace as it was.
// Deleting a file inside a run does not delete it from the workspace (runs report writes, not removals);
// use `rm` or `deleteFile`.

import { WasmcellError, WorkspaceError } from "../../core/errors.ts";
import { requestWithin, type AskedRequest } from "../../options/index.ts";
import type { Language, RunResult } from "../../core/types.ts";
import { BUILTINS } from "./builtins.ts";
import { concat, readArgument } from "./command-args.ts";
import { javascriptPrelude, pythonPrelude } from "./program-cwd.ts";
import { parseCommandLine, type Redirect } from "./shell-words.ts";
import type { CommandContext, Stream } from "./command-context.ts";

export type { CommandContext, Stream } from "./command-context.ts";

/** Exit codes as a shell reports them. */
export const EXIT = { usage: 2, notFound: 127, timeout: 124, interrupted: 130, killed: 137 } as const;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Runs one command line; resolves to its exit code. Rejects only for host failures (engine down). */
export async function runCommandLine(line: string, ctx: CommandContext): Promise<number> {
  const parsed = parseCommandLine(line);
  if (!parsed.ok) {
    ctx.write("stderr", `wasmcell: ${parsed.message}\n`);
    return EXIT.usage;
  }
  if (!parsed.command) return 0;
  const { argv, assignments, redirects } = parsed.command;
  const routed = routeOutput(redirects, ctx);
  if (typeof routed === "number") return routed;
  const sub: CommandContext = { ...ctx, env: { ...ctx.env, ...assignments }, write: routed.write };
  let code = await dispatch(argv, sub);
  try {
    routed.flush();
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    ctx.write("stderr", `wasmcell: ${error.message}\n`);
    code = 1;
  }
  return code;
}

type Target = Stream | "null" | { key: string; given: string; append: boolean; chunks: string[] };

/** The files bash opens as a copy of the descriptor they name (Linux has them too). */
const STANDARD: Record<string, Stream> = {
  "/dev/stdout": "stdout",
  "/dev/fd/1": "stdout",
  "/dev/stderr": "stderr",
  "/dev/fd/2": "stderr",
};

/**
 * `> file`, `>> file`, `2> file`, `2>&1`, `> /dev/null`, `> /dev/stderr`: where each stream goes, in
 * bash's order. One file named by two redirections is refused: bash opens it twice and each stream
 * writes at its own offset, over the other's bytes.
 */
export function routeOutput(
  redirects: Redirect[],
  ctx: CommandContext,
): number | { write: CommandContext["write"]; flush: () => void } {
  const files = new Map<string, Exclude<Target, string>>();
  let out: Target = "stdout";
  let err: Target = "stderr";
  for (const r of redirects) {
    let target: Target;
    const standard = "target" in r ? STANDARD[r.target] : undefined;
    if ("toStdout" in r) target = out;
    else if (standard) target = standard === "stdout" ? out : err;
    else if (r.target === "/dev/null") target = "null";
    else {
      let key: string;
      try {
        key = ctx.workspace.resolve(r.target, ctx.cwd);
      } catch (error) {
        if (!(error instanceof WorkspaceError)) throw error;
        ctx.write("stderr", `bash: ${error.message}\n`);
        return 1;
      }
      if (ctx.workspace.typeOf(key) === "directory") {
        ctx.write("stderr", `bash: ${r.target}: Is a directory\n`);
        return 1;
      }
      // As in bash, a redirection creates the file, not the directories above it.
      if (ctx.workspace.typeOf(key.slice(0, Math.max(0, key.lastIndexOf("/")))) !== "directory") {
        ctx.write("stderr", `bash: ${r.target}: No such file or directory\n`);
        return 1;
      }
      const named = files.get(key);
      if (named) {
        ctx.write(
          "stderr",
          `wasmcell: the file '${named.given}' is named by two redirections (bash would write each stream at its own offset, over the other); use '> ${named.given} 2>&1'\n`,
        );
        return EXIT.usage;
      }
      target = { key, given: r.target, append: r.append, chunks: [] };
      files.set(key, target);
    }
    if (r.fd === 1) out = target;
    else err = target;
  }
  const send = (target: Target, text: string): void => {
    if (target === "null") return;
    if (typeof target === "string") ctx.write(target, text);
    else target.chunks.push(text);
  };
  return {
    write: (stream, text) => send(stream === "stdout" ? out : err, text),
    flush: () => {
      for (const f of files.values()) {
        const before = f.append ? (ctx.workspace.read(f.key) ?? new Uint8Array()) : new Uint8Array();
        ctx.workspace.write(f.key, concat(before, encoder.encode(f.chunks.join(""))), ctx.workspace.absolute(f.key));
      }
    },
  };
}

/** Programs a model reaches for that this sandbox does not have, with the reason. */
const ABSENT: Record<string, string> = {
  pip: "packages cannot be installed here",
  pip3: "packages cannot be installed here",
  npm: "packages cannot be installed here",
  npx: "packages cannot be installed here",
  curl: "there is no network from commands here",
  wget: "there is no network from commands here",
};

async function dispatch(argv: string[], ctx: CommandContext): Promise<number> {
  const [name, ...args] = argv as [string, ...string[]];
  switch (name) {
    case "python":
    case "python3":
      return python(name, args, ctx);
    case "node":
    case "nodejs":
    case "tsx":
    case "ts-node":
      return node(name, args, ctx);
  }
  // Own keys only: `constructor` or `__proto__` is not a command.
  const builtin = Object.hasOwn(BUILTINS, name) ? BUILTINS[name] : undefined;
  if (builtin) return builtin(args, ctx);
  const why = Object.hasOwn(ABSENT, name) ? ABSENT[name] : undefined;
  ctx.write("stderr", `${name}: command not found${why ? ` (${why})` : ""}\n`);
  return EXIT.notFound;
}

async function python(name: string, args: string[], ctx: CommandContext): Promise<number> {
  let i = 0;
  // Flags that change nothing here (unbuffered output, no .pyc files, no site, isolated).
  while (args[i] !== undefined && /^-[uBsSEIq]+$/.test(args[i]!)) i++;
  const first = args[i];
  let code: string;
  let display: string;
  let rest: string[];
  if (first === undefined || first === "-") {
    ctx.write(
      "stderr",
      `${name}: reading a program from standard input is not supported here; use ${name} -c CODE or ${name} FILE.py\n`,
    );
    return EXIT.usage;
  }
  if (first.startsWith("-c")) {
    const inline = first.length > 2 ? first.slice(2) : args[i + 1];
    if (inline === undefined) {
      ctx.write("stderr", "Argument expected for the -c option\n");
      return EXIT.usage;
    }
    [code, display, rest] = [inline, "<string>", ["-c", ...args.slice(first.length > 2 ? i + 1 : i + 2)]];
  } else if (first.startsWith("-")) {
    const why = first === "-m" ? " (there are no modules to run as programs here)" : "";
    ctx.write(
      "stderr",
      `${name}: option ${first} is not supported here${why}; use ${name} -c CODE or ${name} FILE.py\n`,
    );
    return EXIT.usage;
  } else {
    const file = readArgument(first, ctx);
    if ("problem" in file || file.bytes === null) {
      const problem = "problem" in file ? file.problem : "[Errno 2] No such file or directory";
      ctx.write("stderr", `${name}: can't open file '${first}': ${problem}\n`);
      return EXIT.usage;
    }
    [code, display, rest] = [decoder.decode(file.bytes), ctx.workspace.absolute(file.key), args.slice(i)];
  }
  // sys.argv, os.environ and the working directory the program sees (./program-cwd.ts) are set by a
  // first line ahead of the code, so tracebacks are shifted back by that line. `from __future__`,
  // which must come first, gets no prelude: such a program runs without arguments or environment
  // (refused when the command line gives some) and sees the engine's own working directory.
  let prelude = "";
  if (!/^\s*from\s+__future__\s+import/m.test(code)) {
    prelude = pythonPrelude(rest, ctx.env, ctx.workspace.absolute(ctx.cwd));
  } else if (rest.length > 1 || Object.keys(ctx.env).length > 0) {
    ctx.write(
      "stderr",
      `${name}: arguments and environment variables cannot be passed to a program with \`from __future__\` imports here\n`,
    );
    return EXIT.usage;
  }
  return runGuest(name, { language: "python", code: prelude + code }, ctx, (stack) =>
    stack.replace(
      /File "<code>", line (\d+)/g,
      (_, n: string) => `File "${display}", line ${Number(n) - (prelude ? 1 : 0)}`,
    ),
  );
}

async function node(name: string, args: string[], ctx: CommandContext): Promise<number> {
  const first = args[0];
  let code: string;
  let language: Language;
  let display: string;
  if (first === undefined) {
    ctx.write("stderr", `${name}: there is no REPL here; use ${name} -e CODE or ${name} FILE\n`);
    return EXIT.usage;
  }
  if (first === "-e" || first === "--eval") {
    if (args[1] === undefined) {
      ctx.write("stderr", `${name}: ${first} requires an argument\n`);
      return 9;
    }
    [code, display] = [args[1], "[eval]"];
    language = name === "node" || name === "nodejs" ? "javascript" : "typescript";
  } else if (first.startsWith("-")) {
    ctx.write("stderr", `${name}: option ${first} is not supported here; use ${name} -e CODE or ${name} FILE\n`);
    return 9;
  } else {
    const file = readArgument(first, ctx);
    if ("problem" in file || file.bytes === null) {
      const problem = "problem" in file ? file.problem : "Cannot find module";
      ctx.write("stderr", `Error: ${problem} '${first}'\n`);
      return 1;
    }
    [code, display] = [decoder.decode(file.bytes), ctx.workspace.absolute(file.key)];
    language = /\.[mc]?tsx?$/.test(first) ? "typescript" : "javascript";
  }
  // process.cwd(), process.argv and process.env, on the code's first line (./program-cwd.ts).
  const extra = args.slice(first.startsWith("-") ? 2 : 1);
  const argv = [name, ...(first.startsWith("-") ? [] : [display]), ...extra];
  const prelude = javascriptPrelude(argv, ctx.env, ctx.workspace.absolute(ctx.cwd));
  // A `#!` line is only valid first: the prelude takes its place (on the same line, so no line moves).
  code = code.startsWith("#!") ? code.replace(/^#![^\n]*/, prelude) : prelude + code;
  return runGuest(name, { language, code }, ctx, (stack) => stack.replace(/\bmain\.[jt]s:/g, `${display}:`));
}

/**
 * One wasmcell run over the files under the working directory, within the session's offer (the
 * command line is the model's); output streams through `ctx.write`.
 */
async function runGuest(
  program: string,
  request: AskedRequest,
  ctx: CommandContext,
  relabel: (stack: string) => string,
): Promise<number> {
  const sent = { stdout: 0, stderr: 0 };
  let result: RunResult;
  try {
    result = await ctx.sandbox.run({
      ...requestWithin({ ...request, files: ctx.workspace.filesUnder(ctx.cwd) }, ctx.offer),
      signal: ctx.signal,
      onOutput: (chunk) => {
        sent[chunk.stream] += chunk.text.length;
        ctx.write(chunk.stream, chunk.text);
      },
    });
  } catch (error) {
    // A request the sandbox refuses (code or files over their caps) is this command's failure.
    if (!(error instanceof WasmcellError) || error.code !== "INVALID_OPTION") throw error;
    ctx.write("stderr", `${program}: ${error.message}\n`);
    return EXIT.usage;
  }
  // Whatever did not stream (an engine that reports output only at the end, a truncation marker).
  for (const stream of ["stdout", "stderr"] as const) {
    if (result[stream].length > sent[stream]) ctx.write(stream, result[stream].slice(sent[stream]));
  }
  if (result.ok) {
    try {
      // The paths come from where the guest ran: resolved like any other path, never trusted.
      ctx.workspace.writeAll(result.files.map((f) => [ctx.workspace.resolve(f.path, ctx.cwd), f.bytes] as const));
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      ctx.write("stderr", `wasmcell: the files this command wrote were not kept: ${error.message}\n`);
      return 1;
    }
    return 0;
  }
  const e = result.error;
  if (e.kind === "aborted") return EXIT.interrupted;
  if (e.kind === "timeout" || e.kind === "memory") {
    // As timeout(1) and the kernel's OOM killer report them.
    ctx.write("stderr", `${e.kind === "timeout" ? "timeout" : program}: ${e.message}\n`);
    return e.kind === "timeout" ? EXIT.timeout : EXIT.killed;
  }
  const exit = e.name === "SystemExit" ? /^the code called exit\((.*)\)$/s.exec(e.message)?.[1] : undefined;
  if (exit !== undefined) {
    if (/^-?\d+$/.test(exit)) return Number(exit) & 255;
    ctx.write("stderr", `${exit.replace(/^(['"])(.*)\1$/s, "$2")}\n`);
    return 1;
  }
  const stack = e.stack ? relabel(e.stack) : "";
  const text = stack.includes(`${e.name}: `) ? stack : `${e.name}: ${e.message}\n${stack}`;
  ctx.write("stderr", text.endsWith("\n") ? text : `${text}\n`);
  return 1;
}
