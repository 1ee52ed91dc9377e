// Which warm parent a stateless native run goes to: the stack's (it imported `python.preload`) or the
// light one (no preload; the standard library's everyday modules, LIGHT_PRELOAD in light.ts). A fork
// of the stack's parent copies the page tables of ~90 MB and its child's exit tears them down, about
// 8 ms of CPU a run; the light parent is ~20 MB, and its children cost a fraction of that. Code that
// imports only the standard library (most of what an agent's Python tool runs: arithmetic, strings,
// json, datetime) never needs the stack, so it goes to the light parent, unless it imports a module
// the stack's parent holds and the light one does not (`urllib.request` is ~60 ms to import in a
// child, the fork saving ~4): then the stack's parent, where it costs nothing. Anything else goes to
// the stack's parent too.
//
// This is a choice of speed, not a boundary: both parents are the same jail with the same children
// (parent.py), and a guest that fools the scan only runs slower (an `exec` that imports pandas in a
// light child pays pandas' import, ~400 ms). So the scan is conservative the cheap way: whatever it
// cannot read as a plain standard-library import sends the run to the stack's parent.

/**
 * Code longer than this is not scanned: it goes to the stack's parent. The scan runs on the host's
 * event loop, on the guest's text, so it reads each character a bounded number of times (no
 * statement's scan runs into another's: a megabyte of unclosed `from x import (` stalled the host for
 * over a minute before); and for code this long the light fork's few milliseconds are nothing to its
 * compile.
 */
export const MAX_SCANNED_CODE = 64 * 1024;

/** A module name as an import statement writes it (dotted). */
const NAME = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Spellings that can import without an import statement: the run goes to the stack's parent. A
 * string or a comment that contains one does too (harmless: the stack's parent runs anything).
 */
const DYNAMIC = /__import__|importlib|import_module|\bexec\b|\brunpy\b|\bpkgutil\b|\beval\b/;

/** Input files the guest could import (a module of its own may import anything). */
const IMPORTABLE = /\.(py|pyc|pth|so)$|(^|\/)__init__\.py$/;

/**
 * The modules `code`'s import statements name, dotted (`import a.b` → `a.b`; `from a import b, c` →
 * `a`, and `a.b`, `a.c` in case they are submodules), or undefined when an `import` in it is not one
 * this scan reads (then the caller takes the stack's parent). Backslash continuations are joined
 * first; `from x import (a, b)` may span lines.
 */
export function importedModules(code: string): Set<string> | undefined {
  if (code.length > MAX_SCANNED_CODE) return undefined;
  const text = code.replace(/\\\r?\n/g, " ");
  const modules = new Set<string>();
  let statements = 0;
  // A from-import's names run to the end of its line, or, parenthesised, to the next ")"; no statement
  // may start inside an earlier one's list (Python allows none there), so the lists never overlap
  // and no character is read twice however many statements there are.
  let listEnd = 0;
  for (const m of text.matchAll(/(?:^|[;:\n])[ \t]*from[ \t]+([^\s;#]+)[ \t]+import\b[ \t]*(\(?)/g)) {
    if (m.index < listEnd) return undefined;
    statements++;
    const from = m[1]!;
    if (!NAME.test(from)) return undefined; // relative (`from . import x`) or not a name
    modules.add(from);
    const start = m.index + m[0].length;
    if (m[2]) {
      listEnd = text.indexOf(")", start);
      if (listEnd < 0) return undefined; // an unclosed list: not Python this scan reads
    } else {
      const line = /[^\n;#]*/y;
      line.lastIndex = start;
      line.exec(text);
      listEnd = line.lastIndex;
    }
    for (const item of text.slice(start, listEnd).split(",")) {
      const name = item.trim().split(/\s+/)[0];
      if (name && IDENTIFIER.test(name)) modules.add(`${from}.${name}`);
    }
  }
  for (const m of text.matchAll(/(?:^|[;:\n])[ \t]*import[ \t]+([^\n;#]*)/g)) {
    statements++;
    for (const item of m[1]!.split(",")) {
      const parts = item.trim().split(/[ \t]+/);
      const [name, as, alias] = parts;
      const ok =
        name !== undefined &&
        NAME.test(name) &&
        (parts.length === 1 || (parts.length === 3 && as === "as" && IDENTIFIER.test(alias ?? "")));
      if (!ok) return undefined;
      modules.add(name);
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

/** What the route knows of the parents, from their hellos. */
export interface Parents {
  /** The interpreter's standard-library top-level names (`sys.stdlib_module_names`). */
  stdlib: ReadonlySet<string>;
  /** The modules a light parent holds, and the modules the stack's parent holds (`sys.modules`). */
  light: ReadonlySet<string>;
  stack: ReadonlySet<string>;
}

/**
 * True when the run goes to the stack's parent: it may import something outside the standard
 * library, or a module `python.preload` names, or a module of its own from its input files, or a
 * module the stack's parent holds and the light one does not.
 */
export function needsStack(run: Route, parents: Parents, preload: readonly string[]): boolean {
  if (DYNAMIC.test(run.code)) return true;
  for (const path of run.files.keys()) if (IMPORTABLE.test(path)) return true;
  const modules = importedModules(run.code);
  if (!modules) return true;
  const preloaded = new Set(preload.map((p) => p.split(".")[0]!));
  for (const m of modules) {
    const top = m.split(".")[0]!;
    if (!parents.stdlib.has(top) || preloaded.has(top)) return true;
    if (!parents.light.has(m) && parents.stack.has(m)) return true;
  }
  return false;
}
