// What the built-ins share about their arguments: reading a workspace file named on a command line,
// splitting flags from operands (refusing a flag a built-in does not implement, exit 2), and a
// problem worded as a shell words it.

import { WorkspaceError } from "../../core/errors.ts";
import type { CommandContext } from "./command-context.ts";

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
export function problemOf(error: WorkspaceError): string {
  return error.message.slice(JSON.stringify(error.path).length + 2);
}

/** Tells a flag a built-in does not implement: exit 2 (bad usage), never a silently ignored flag. */
export function unsupported(name: string, flag: string, allowed: string, ctx: CommandContext): 2 {
  const list = [...allowed].map((c) => `-${c}`).join(" ") || "none";
  ctx.write("stderr", `${name}: option '${flag}' is not supported here (supported: ${list})\n`);
  return 2;
}

/** Splits leading `-abc` flags from operands (`--` ends them); undefined plus a message for a bad flag. */
export function parseFlags(
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
        unsupported(name, a, allowed, ctx);
        return undefined;
      }
      flags.add(f);
    }
  }
  return [flags, args.slice(i)];
}

export function resolveOperand(name: string, path: string, ctx: CommandContext): string | undefined {
  try {
    return ctx.workspace.resolve(path, ctx.cwd);
  } catch (error) {
    if (!(error instanceof WorkspaceError)) throw error;
    ctx.write("stderr", `${name}: ${path}: ${problemOf(error)}\n`);
    return undefined;
  }
}
