// The few file commands a model uses between program runs, over the workspace only: echo, cat, ls,
// head, tail, wc, pwd, cd, mkdir, rm, true, false. Each does what GNU coreutils/bash do for the
// options it accepts, and refuses any other option (exit 2) rather than ignore it. ls is in
// ./listing.ts, head/tail/wc in ./text-builtins.ts.

import { WorkspaceError } from "../../core/errors.ts";
import { parseFlags, problemOf, readArgument, resolveOperand } from "./command-args.ts";
import type { CommandContext } from "./command-context.ts";
import { ls } from "./listing.ts";
import { TEXT_BUILTINS } from "./text-builtins.ts";

type Builtin = (args: string[], ctx: CommandContext) => number;

const decoder = new TextDecoder();

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
  const parsed = parseFlags("cat", args, "", ctx);
  if (!parsed) return 2;
  if (parsed[1].length === 0 || parsed[1].includes("-")) {
    ctx.write("stderr", "cat: reading standard input is not supported here (commands get no input); name a file\n");
    return 2;
  }
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

const pwd: Builtin = (args, ctx) => {
  if (!parseFlags("pwd", args, "LP", ctx)) return 2;
  ctx.write("stdout", `${ctx.workspace.absolute(ctx.cwd)}\n`);
  return 0;
};

/**
 * `cd DIR` changes the session's working directory for its next commands (and `pwd`, and the
 * directory programs run in); `cd` alone goes to the base directory, `cd -` back to the one before
 * (printing it, as bash does). A directory that is not there fails as in bash: exit 1.
 */
const cd: Builtin = (args, ctx) => {
  const operands = args[0] === "--" ? args.slice(1) : args;
  const option = args[0] !== "--" && args[0]?.startsWith("-") && args[0] !== "-" ? args[0] : undefined;
  if (option !== undefined) {
    ctx.write("stderr", `bash: cd: ${option}: options are not supported here\n`);
    return 2;
  }
  if (operands.length > 1) {
    ctx.write("stderr", "bash: cd: too many arguments\n");
    return 1;
  }
  const [given] = operands;
  let key: string | undefined;
  if (given === "-") {
    if (ctx.oldCwd === undefined) {
      ctx.write("stderr", "bash: cd: OLDPWD not set\n");
      return 1;
    }
    key = ctx.oldCwd;
  } else {
    key = resolveOperand("bash: cd", given ?? ctx.workspace.base, ctx);
    if (key === undefined) return 1;
  }
  const type = ctx.workspace.typeOf(key);
  if (type !== "directory") {
    ctx.write("stderr", `bash: cd: ${given}: ${type === "file" ? "Not a directory" : "No such file or directory"}\n`);
    return 1;
  }
  ctx.chdir(key);
  if (given === "-") ctx.write("stdout", `${ctx.workspace.absolute(key)}\n`);
  return 0;
};

const mkdir: Builtin = (args, ctx) => {
  const parsed = parseFlags("mkdir", args, "p", ctx);
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
  const parsed = parseFlags("rm", args, "rRf", ctx);
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

export const BUILTINS: Record<string, Builtin> = {
  echo,
  cat,
  ls,
  ...TEXT_BUILTINS,
  pwd,
  cd,
  mkdir,
  rm,
  true: () => 0,
  false: () => 1,
};
