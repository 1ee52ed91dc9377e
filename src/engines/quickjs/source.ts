// Turning the user's text into what QuickJS evaluates: TypeScript type stripping, script-or-module
// detection, and which host globals the code can possibly reach.

import type { GuestError } from "../../types.ts";
import { familiesNeeded, familiesNeedTimers, SEALED, type FamilyName, type RuntimeCaps } from "./runtime/table.ts";

interface AmaroError {
  code?: string;
  message?: string;
  startLine?: number;
  startColumn?: number;
}
type Amaro = { transformSync(code: string, options: { mode: "strip-only" }): { code: string } };
let amaro: Promise<Amaro> | undefined;

/**
 * Strips TypeScript types with amaro in strip-only mode: types become whitespace, so every line and
 * column of the output is the user's own. TypeScript that needs a transform (enum, namespace,
 * parameter properties) is a syntax error here, reported at its position.
 */
export async function stripTypes(code: string): Promise<{ code: string } | { error: GuestError }> {
  // A dynamic import (not createRequire) so the engine needs nothing Node-only to load the stripper.
  amaro ??= import("amaro") as Promise<Amaro>;
  const stripper = await amaro;
  try {
    return { code: stripper.transformSync(code, { mode: "strip-only" }).code };
  } catch (caught) {
    const e = (caught ?? {}) as AmaroError;
    const error: GuestError = {
      kind: "syntax",
      name: "SyntaxError",
      message:
        e.code === "UnsupportedSyntax"
          ? `${e.message ?? "unsupported TypeScript"} (wasmcell only strips types; use a const object or union type instead)`
          : (e.message ?? String(caught)),
    };
    if (typeof e.startLine === "number") error.line = e.startLine;
    if (typeof e.startColumn === "number") error.column = e.startColumn + 1;
    if (error.line !== undefined) error.stack = `    at main.ts:${error.line}:${error.column ?? 1}`;
    return { error };
  }
}

// A static `import … from` / `import "x"` / `export …` at the start of a line makes the code a module.
// `import(` (dynamic import) and `import.meta` do not.
const MODULE_SYNTAX = /^[ \t]*(?:import[ \t]*(?:[\w$*{]|["'])|export[ \t{*])/m;

export function isModule(code: string): boolean {
  return MODULE_SYNTAX.test(code);
}

/** Top-level await in a script needs QuickJS's async eval; plain scripts skip its promise round. */
export function usesAwait(code: string): boolean {
  return code.includes("await");
}

/**
 * Which host-provided globals to install. Creating them costs a few microseconds each, most snippets
 * use none, and code can only reach a global it names — or one it finds through the global object
 * (`globalThis`, `this`, `eval`, `Function`, a constructor chain, a getter on a shared prototype) or
 * through an escaped name. Any sign of those installs everything, so nothing a program can reach is
 * missing; leaving a global out only ever removes a capability.
 */
export const REFLECTIVE =
  /globalThis|\bthis\b|eval|Function|constructor|prototype|__proto__|Reflect|valueOf|\\u|\bwith\b|getOwnProperty|import/;

export interface GlobalNeeds {
  console: boolean;
  timers: boolean;
  fs: boolean;
  hostFunctions: boolean;
  /** The web-platform families of the guest runtime (runtime/table.ts), in install order. */
  runtime: readonly FamilyName[];
  /** Install `runtime` as stubs that load a family on first touch (code that reaches globals reflectively). */
  runtimeLazy: boolean;
}

export function globalNeeds(code: string, hostFunctionNames: string[], caps: RuntimeCaps = SEALED): GlobalNeeds {
  if (REFLECTIVE.test(code))
    return {
      console: true,
      timers: true,
      fs: true,
      hostFunctions: hostFunctionNames.length > 0,
      runtime: familiesNeeded(code, caps, true),
      runtimeLazy: true,
    };
  const runtime = familiesNeeded(code, caps, false);
  return {
    console: code.includes("console"),
    timers: /Timeout|Interval|queueMicrotask/.test(code) || familiesNeedTimers(runtime),
    fs: /\bfs\b/.test(code),
    hostFunctions: hostFunctionNames.some((name) => code.includes(name)),
    runtime,
    runtimeLazy: false,
  };
}

export function allGlobals(caps: RuntimeCaps = SEALED): GlobalNeeds {
  return {
    console: true,
    timers: true,
    fs: true,
    hostFunctions: true,
    runtime: familiesNeeded("", caps, true),
    runtimeLazy: true,
  };
}
