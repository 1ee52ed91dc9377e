// The few file commands a model uses between program runs, over the workspace only: echo, cat, ls,
// pwd, cd, mkdir, rm, true, false. Each does what GNU coreutils/bash do for the options it accepts,
// and refuses any other option (exit 2) rather than ignore it.

import { WorkspaceError } from "../../core/errors.ts";
import type { CommandContext } from "./command-context.ts";

type Builtin = (args: string[], ctx: CommandContext) => number;

const decoder = new TextDecoder();

/** A workspace file named on a command line: its key and bytes, or the problem in a shell's words. */
export function readArgument(
  path: string,
  ctx: CommandContext,
): { key: string; bytes: Uint8Array | null } | { problem: string } {
  try {
    const key = ctx.workspace.resolve(path, ctx.cwd);
    if (ctx.workspace.typeOf(key) === "directory") return { problem: "Is a directory" };
    return { key, bytes: ctx.workspace.read(key) };
  } catch (error) {
    if (error instanceof WorkspaceError) return { problem: problemOf(error) };
    throw error;
  }
}

export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

/** The problem without the quoted path in front (a shell names the path itself). */
function problemOf(error: WorkspaceError): string {
  return error.message.slice(JSON.stringify(error.path).length + 2);
}

/** Splits leading `-abc` flags from operands (`--` ends them); undefined plus a message for a bad flag. */
function options(
  name: string,
  args: string[],
  allowed: string,
  ctx: CommandContext,
): [Set<string>, string[]] | undefined {
  const flags = new Set<string>();
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") {
      i++;
      break;
    }
    if (!a.startsWith("-") || a === "-") break;
    for (const f of a.slice(1)) {
      if (!allowed.includes(f)) {
        ctx.write(
          "stderr",
          `${name}: option '${a}' is not supported here (supported: ${[...allowed].map((c) => `-${c}`).join(" ") || "none"})\n`,
        );
        return undefined;
      }
      flags.add(f);
    }
  }
  return [flags, args.slice(i)];
}

function resolveOperand(name: string, path: string, ctx: CommandContext): string | undefined {
  try {
    return ctx.workspace.resolve(path, ctx.cwd);
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    ctx.write("stderr", `${name}: ${path}: ${problemOf(error)}\n`);
    return undefined;
  }
}

const echo: Builtin = (args, ctx) => {
  // bash's echo takes -n, -e, -E only as leading words made of those letters; -e is not implemented.
  let i = 0;
  let newline = true;
  for (; i < args.length && /^-[neE]+$/.test(args[i]!); i++) {
    if (args[i]!.includes("e")) {
      ctx.write("stderr", "echo: -e is not supported here; write the characters with python or node\n");
      return 2;
    }
    if (args[i]!.includes("n")) newline = false;
  }
  ctx.write("stdout", args.slice(i).join(" ") + (newline ? "\n" : ""));
  return 0;
};

const cat: Builtin = (args, ctx) => {
  const parsed = options("cat", args, "", ctx);
  if (!parsed) return 2;
  let code = 0;
  for (const path of parsed[1]) {
    const file = readArgument(path, ctx);
    if ("problem" in file || file.bytes === null) {
      ctx.write("stderr", `cat: ${path}: ${"problem" in file ? file.problem : "No such file or directory"}\n`);
      code = 1;
    } else ctx.write("stdout", decoder.decode(file.bytes));
  }
  return code;
};

const ls: Builtin = (args, ctx) => {
  const parsed = options("ls", args, "1aA", ctx);
  if (!parsed) return 2;
  const [flags, operands] = parsed;
  const paths = operands.length > 0 ? operands : ["."];
  const hidden = flags.has("a") || flags.has("A");
  let code = 0;
  const blocks: string[] = [];
  for (const path of paths) {
    const key = resolveOperand("ls", path, ctx);
    if (key === undefined) {
      code = 2;
      continue;
    }
    const type = ctx.workspace.typeOf(key);
    if (type === undefined) {
      ctx.write("stderr", `ls: cannot access '${path}': No such file or directory\n`);
      code = 2;
    } else if (type === "file") blocks.push(`${path}\n`);
    else {
      const names = (ctx.workspace.list(key) ?? []).map((e) => e.name).filter((n) => hidden || !n.startsWith("."));
      if (flags.has("a")) names.unshift(".", "..");
      const body = names.map((n) => `${n}\n`).join("");
      blocks.push(paths.length > 1 ? `${path}:\n${body}` : body);
    }
  }
  ctx.write("stdout", blocks.join(paths.length > 1 ? "\n" : ""));
  return code;
};

const pwd: Builtin = (args, ctx) => {
  if (!options("pwd", args, "LP", ctx)) return 2;
  ctx.write("stdout", `${ctx.workspace.absolute(ctx.cwd)}\n`);
  return 0;
};

/** `cd` alone changes nothing a later command sees (the session's base directory is fixed); it checks. */
const cd: Builtin = (args, ctx) => {
  if (args.length > 1) {
    ctx.write("stderr", "cd: too many arguments\n");
    return 1;
  }
  const key = resolveOperand("cd", args[0] ?? ctx.workspace.base, ctx);
  if (key === undefined) return 1;
  if (ctx.workspace.typeOf(key) !== "directory") {
    ctx.write("stderr", `cd: ${args[0]}: No such file or directory\n`);
    return 1;
  }
  return 0;
};

const mkdir: Builtin = (args, ctx) => {
  const parsed = options("mkdir", args, "p", ctx);
  if (!parsed) return 2;
  const [flags, operands] = parsed;
  if (operands.length === 0) {
    ctx.write("stderr", "mkdir: missing operand\n");
    return 1;
  }
  let code = 0;
  for (const path of operands) {
    const key = resolveOperand("mkdir", path, ctx);
    try {
      if (key !== undefined) ctx.workspace.mkdir(key, flags.has("p"), path);
      else code = 1;
    } catch (error) {
      if (!(error instanceof WorkspaceError)) throw error;
      ctx.write("stderr", `mkdir: cannot create directory '${path}': ${problemOf(error)}\n`);
      code = 1;
    }
  }
  return code;
};

const rm: Builtin = (args, ctx) => {
  const parsed = options("rm", args, "rRf", ctx);
  if (!parsed) return 2;
  const [flags, operands] = parsed;
  const recursive = flags.has("r") || flags.has("R");
  if (operands.length === 0 && !flags.has("f")) {
    ctx.write("stderr", "rm: missing operand\n");
    return 1;
  }
  let code = 0;
  for (const path of operands) {
    const key = resolveOperand("rm", path, ctx);
    if (key === undefined) {
      code = 1;
      continue;
    }
    const type = ctx.workspace.typeOf(key);
    if (type === undefined) {
      if (!flags.has("f")) {
        ctx.write("stderr", `rm: cannot remove '${path}': No such file or directory\n`);
        code = 1;
      }
    } else if (type === "directory" && !recursive) {
      ctx.write("stderr", `rm: cannot remove '${path}': Is a directory\n`);
      code = 1;
    } else if (key === "") {
      ctx.write("stderr", `rm: refusing to remove the base directory '${path}'\n`);
      code = 1;
    } else if (type === "directory") ctx.workspace.deleteTree(key);
    else ctx.workspace.deleteFile(key);
  }
  return code;
};

export const BUILTINS: Record<string, Builtin> = { echo, cat, ls, pwd, cd, mkdir, rm, true: () => 0, false: () => 1 };
