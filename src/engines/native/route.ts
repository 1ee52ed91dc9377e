// Which warm parent a stateless native run goes to: the stack's (it imported `python.preload`) or the
// light one (no preload). A fork of the stack's parent copies the page tables of ~90 MB and its
// child's exit tears them down, about 8 ms of CPU a run; the light parent is ~10 MB, and its
// children cost a fraction of that. Code that imports only the standard library (most of what an
// agent's Python tool runs: arithmetic, strings, json, datetime) never needs the stack, so it goes
// to the light parent; anything else goes to the stack's.
//
// This is a choice of speed, not a boundary: both parents are the same jail with the same children
// (parent.py), and a guest that fools the scan only runs slower (an `exec` that imports pandas in a
// light child pays pandas' import, ~400 ms). So the scan is conservative the cheap way: whatever it
// cannot read as a plain standard-library import sends the run to the stack's parent, today's path.

/** A module name as an import statement writes it (dotted), or a relative one (leading dots). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/**
 * Spellings that can import without an import statement: the run goes to the stack's parent. A
 * string or a comment that contains one does too (harmless: the stack's parent runs anything).
 */
const DYNAMIC = /__import__|importlib|import_module|\bexec\b|\brunpy\b|\bpkgutil\b|\beval\b/;

/** Input files the guest could import (a module of its own may import anything). */
const IMPORTABLE = /\.(py|pyc|pth|so)$|(^|\/)__init__\.py$/;

/**
 * The top-level modules `code` names in import statements, or undefined when an `import` in it is
 * not one this scan reads (then the caller takes the stack's parent). Backslash continuations are
 * joined first; `from x import (a, b)` spans lines, but only `x` matters.
 */
export function importedModules(code: string): Set<string> | undefined {
  const text = code.replace(/\\\r?\n/g, " ");
  const modules = new Set<string>();
  let statements = 0;
  for (const m of text.matchAll(/(?:^|[;:\n])[ \t]*from[ \t]+(\S+)[ \t]+import\b/g)) {
    statements++;
    const name = m[1]!;
    if (!NAME.test(name)) return undefined; // relative (`from . import x`) or not a name
    modules.add(name.split(".")[0]!);
  }
  for (const m of text.matchAll(/(?:^|[;:\n])[ \t]*import[ \t]+([^\n;#]*)/g)) {
    statements++;
    for (const item of m[1]!.split(",")) {
      const parts = item.trim().split(/[ \t]+/);
      const [name, as, alias] = parts;
      const ok =
        name !== undefined &&
        NAME.test(name) &&
        (parts.length === 1 || (parts.length === 3 && as === "as" && NAME.test(alias ?? "")));
      if (!ok) return undefined;
      modules.add(name.split(".")[0]!);
    }
  }
  // Every `import` word must be one of the statements read above (one in `from x import y` counts
  // once): any other (an import after `else:` on one line, say) is one this scan did not read.
  const words = [...text.matchAll(/\bimport\b/g)].length;
  return words === statements ? modules : undefined;
}

export interface Route {
  code: string;
  files: ReadonlyMap<string, Uint8Array>;
}

/**
 * True when the run goes to the stack's parent: it may import something outside the standard
 * library, or a module `python.preload` names (the stack's parent has it imported already), or a
 * module of its own from its input files. `stdlib`: the interpreter's own `sys.stdlib_module_names`.
 */
export function needsStack(run: Route, stdlib: ReadonlySet<string>, preload: readonly string[]): boolean {
  if (DYNAMIC.test(run.code)) return true;
  for (const path of run.files.keys()) if (IMPORTABLE.test(path)) return true;
  const modules = importedModules(run.code);
  if (!modules) return true;
  const preloaded = new Set(preload.map((p) => p.split(".")[0]!));
  for (const m of modules) if (!stdlib.has(m) || preloaded.has(m)) return true;
  return false;
}
