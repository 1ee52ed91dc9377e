// Turning the user's text into what QuickJS evaluates: TypeScript type stripping, script-or-module
// detection, and which host globals the code can possibly reach.

import type TypeScriptModule from "typescript";
import type { DiagnosticWithLocation, Node, SourceFile } from "typescript";
import type { blankSourceFile } from "ts-blank-space";
import type { GuestError } from "../../../core/types.ts";
import { familiesNeeded, familiesNeedTimers, SEALED, type FamilyName, type RuntimeCaps } from "./runtime/table.ts";

type TypeScript = typeof TypeScriptModule;
interface Stripper {
  ts: TypeScript;
  blank: typeof blankSourceFile;
}
let stripper: Promise<Stripper> | undefined;
let stripperLoaded = false;

/** Code ready for the engine: stripped, named, and known to be a script or a module. */
export interface PreparedSource {
  code: string;
  filename: string;
  module: boolean;
  async: boolean;
}

/**
 * Loads the TypeScript parser, on the first TypeScript run only: it is large, and JavaScript-only hosts
 * never pay for it. A load that failed (Deno without the env permissions TypeScript reads at load) is
 * not cached: the run throws the runtime's own message, and the next TypeScript run tries again.
 *
 * `#typescript` and `#ts-blank-space` are package.json `imports`: on Node (and Deno, Bun) the packages
 * themselves; in Workers, browsers and edge runtimes one module built from the same two packages with
 * TypeScript's Node detection compiled out (scripts/build-stripper.ts). Workers with nodejs_compat
 * (the default from compatibility date 2026-08-04) pass that detection, and typescript.js then throws
 * at load building `ts.sys` from `require("os")` and `__filename`, which a Worker does not have.
 */
export function loadStripper(): Promise<Stripper> {
  stripper ??= Promise.all([import("#typescript"), import("#ts-blank-space")]).then(
    ([ts, tbs]) => {
      stripperLoaded = true;
      return { ts: ts.default, blank: tbs.blankSourceFile };
    },
    (error: unknown) => {
      stripper = undefined;
      throw error;
    },
  );
  return stripper;
}

/** Whether a TypeScript run would start at once (the parser is loaded) or wait for `loadStripper`. */
export function isStripperLoaded(): boolean {
  return stripperLoaded;
}

// Constructs that need a transform, not just blanking, by the syntax kind ts-blank-space reports
// (for a parameter property it reports the modifier): what to call it, and what to write instead.
const PARAMETER_PROPERTY = ["a parameter property (`constructor(public x)`)", "assign `this.x = x` in the body"];
const UNSUPPORTED: Record<string, string[]> = {
  EnumDeclaration: ["enum", "use a const object or a union type"],
  ModuleDeclaration: ["a namespace with values", "use a plain object or module"],
  PublicKeyword: PARAMETER_PROPERTY,
  PrivateKeyword: PARAMETER_PROPERTY,
  ProtectedKeyword: PARAMETER_PROPERTY,
  ReadonlyKeyword: PARAMETER_PROPERTY,
  OverrideKeyword: PARAMETER_PROPERTY,
  ImportEqualsDeclaration: ["`import x = require(...)`", "use `import x from ...`"],
  ExportAssignment: ["`export =`", "use `export default`"],
  TypeAssertionExpression: ["a `<T>value` type assertion", "use `value as T`"],
};

function at(error: GuestError, ts: TypeScript, file: SourceFile, pos: number): GuestError {
  const { line, character } = ts.getLineAndCharacterOfPosition(file, pos);
  error.line = line + 1;
  error.column = character + 1;
  error.stack = `    at main.ts:${error.line}:${error.column}`;
  return error;
}

/**
 * Strips TypeScript types with ts-blank-space (the TypeScript parser, pure JavaScript): types become
 * whitespace, so every line and column of the output is the user's own, and it needs no Node built-in
 * and no run-time WASM compilation, so it runs wherever the engine does (Workers refuse compiling WASM
 * from bytes). TypeScript that needs a transform (enum, namespace, parameter properties) is a syntax
 * error here, reported at its position. The stripper is a pure function of its input: a failure in it
 * (a stack overflow on deeply nested types) leaves nothing behind for the next run.
 */
export async function stripTypes(code: string): Promise<{ code: string } | { error: GuestError }> {
  const { ts, blank } = await loadStripper();
  try {
    const file = ts.createSourceFile(
      "main.ts",
      code,
      {
        languageVersion: ts.ScriptTarget.ESNext,
        impliedNodeFormat: ts.ModuleKind.ESNext,
        jsDocParsingMode: ts.JSDocParsingMode.ParseNone,
      },
      false,
      ts.ScriptKind.TS,
    );
    // The parser's own diagnostics (not type checking): the first is the syntax error to report.
    const diagnostic = (file as { parseDiagnostics?: DiagnosticWithLocation[] }).parseDiagnostics?.[0];
    if (diagnostic) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      return { error: at({ kind: "syntax", name: "SyntaxError", message }, ts, file, diagnostic.start) };
    }
    let unsupported: Node | undefined;
    const stripped = blank(file, (node) => void (unsupported ??= node));
    if (unsupported) {
      const kind = ts.SyntaxKind[unsupported.kind];
      const [what, instead] = UNSUPPORTED[kind] ?? [`TypeScript syntax ${kind}`, "write it as plain JavaScript"];
      const message = `${what} needs a transform: wasmcell only strips types (${instead ?? ""})`;
      return { error: at({ kind: "syntax", name: "SyntaxError", message }, ts, file, unsupported.getStart(file)) };
    }
    return { code: stripped };
  } catch (caught) {
    // The host's own stack ran out in the recursive parser: the input nests too deeply. Anything else
    // thrown is a fault of the stripper under this input; either way a result, never a rejection.
    if (caught instanceof RangeError) {
      const message = "TypeScript nested too deeply to strip its types (the type stripper ran out of stack)";
      return { error: { kind: "stack", name: "RangeError", message } };
    }
    const message = `the TypeScript stripper failed on this input: ${caught instanceof Error ? caught.message : String(caught)}`;
    return { error: { kind: "crashed", name: "InternalError", message } };
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
