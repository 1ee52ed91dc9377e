// Pyodide-engine sandboxes for tests: one per seal configuration per test file, shared by its tests
// (a sidecar start is ~1 s from the cached snapshot). Seccomp runs in the "kill" mode, so a syscall
// missing from the allowlist kills the sidecar and shows up as a failure.
import { launchSidecar } from "../../src/engines/pyodide/launch.ts";
import { RESOLVED_DEFAULT_SEAL, type ResolvedSeal, type SealOptions } from "../../src/options/index.ts";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { Limits, RunResult } from "../../src/core/types.ts";

/** The full seal: bubblewrap, seccomp (kill mode), Node's permission model, the uid drop. */
export const FULL: SealOptions = { seccomp: "kill" };

/** Python prelude: `probe(fn)` → "ALLOWED" or the name of the exception that stopped it. */
export const PY_PROBE = `
def probe(fn):
    try:
        fn()
        return "ALLOWED"
    except BaseException as e:
        return type(e).__name__
`;

/**
 * Python prelude: `find_js(roots, enter=(), main_prefix=None)` → (sorted names of the JavaScript-proxy
 * and Pyodide types reachable from `roots`, how many objects were seen). It follows containers,
 * class dictionaries, closures, defaults, bound methods and attributes, and a function's globals
 * (and any namespace dict) only when they are those of a module (or globals dict) in `enter`, or
 * __main__'s, which it sees only through the names starting with `main_prefix`. Every object seen is kept alive, so no id is
 * reused by a temporary (a class's `__dict__` is made afresh on each access).
 */
export const PY_FIND_JS = String.raw`
def find_js(roots, enter=(), main_prefix=None):
    import sys, types
    main = sys.modules["__main__"].__dict__
    mine = {k: v for k, v in main.items() if main_prefix and k.startswith(main_prefix)}
    follow = [getattr(m, "__dict__", m) for m in enter] + [main]
    seen, js, todo, keep = set(), [], list(roots), []
    while todo:
        o = todo.pop()
        if o is main:
            o = mine
        if id(o) in seen or isinstance(o, types.ModuleType) and not any(o is m for m in enter):
            continue
        if isinstance(o, dict) and "__builtins__" in o and not any(o is g for g in follow):
            continue  # another namespace (a module's globals, a run's namespace)
        seen.add(id(o))
        keep.append(o)
        if type(o).__name__.startswith("Js") or type(o).__module__.startswith(("pyodide", "_pyodide")):
            js.append(type(o).__name__)
        if isinstance(o, (dict, types.MappingProxyType)):
            todo.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            todo.extend(o)
        for name in ("__dict__", "__globals__", "__closure__", "__defaults__", "__kwdefaults__",
                     "cell_contents", "__func__", "__self__"):
            try:
                attr = getattr(o, name)
            except Exception:
                continue
            if name == "__globals__" and not any(attr is g for g in follow):
                continue
            if attr is not None and attr is not __builtins__:
                todo.append(attr)
    return sorted(set(js)), len(seen)
`;

/**
 * Python prelude: `fn`, a JsProxy of a JavaScript function (`Number`; `fn.constructor` is the realm's
 * `Function`), made the one way the guest layer leaves open: ctypes calling the interpreter's exported
 * `JsProxy_create` (docs/seal.md, "Guest layer"). For the tests of the layers below it, which assume
 * a guest holds one. A JavaScript reference kept past the run retires the sidecar.
 */
export const PY_JS_FUNCTION = `import ctypes as _ctypes
_make = _ctypes.pythonapi.JsProxy_create
_make.restype, _make.argtypes = _ctypes.py_object, [_ctypes.c_int]
fn = _make(0).constructor
`;

const sandboxes = new Map<string, Promise<Sandbox>>();

export function pyodideSandbox(seal: SealOptions = FULL, pool = 1): Promise<Sandbox> {
  const key = JSON.stringify([seal, pool]);
  let s = sandboxes.get(key);
  if (!s) {
    s = createSandbox({ python: { engine: "pyodide", pool, maxQueue: 8 }, seal });
    sandboxes.set(key, s);
  }
  return s;
}

export async function runPy(
  code: string,
  limits: Partial<Limits> = {},
  files?: Record<string, string | Uint8Array>,
  seal: SealOptions = FULL,
): Promise<RunResult> {
  const sandbox = await pyodideSandbox(seal);
  return sandbox.run({
    language: "python",
    engine: "pyodide",
    code,
    limits: { timeoutMs: 10_000, ...limits },
    ...(files ? { files } : {}),
  });
}

export async function closePyodide(): Promise<void> {
  const all = [...sandboxes.values()];
  sandboxes.clear();
  await Promise.allSettled(all.map(async (s) => (await s).close()));
}

export function resolvedSeal(seal: SealOptions): ResolvedSeal {
  return {
    bubblewrap: seal.bubblewrap ?? RESOLVED_DEFAULT_SEAL.bubblewrap,
    seccomp: seal.seccomp === undefined || seal.seccomp === true ? "enforce" : seal.seccomp,
    nodePermissions: seal.nodePermissions ?? RESOLVED_DEFAULT_SEAL.nodePermissions,
    dropPrivileges:
      seal.dropPrivileges === undefined || seal.dropPrivileges === true
        ? RESOLVED_DEFAULT_SEAL.dropPrivileges
        : seal.dropPrivileges,
  };
}

const PROBE = new URL("../engines/pyodide/fixtures/seal-probe.ts", import.meta.url).pathname;

/**
 * Runs the seal probe in the sidecar's place — same Node flags, binds and jail as a real sidecar —
 * as if a guest had already escaped Python into the sidecar's JavaScript realm, and returns what each
 * attempt got.
 */
export async function probeSeal(
  seal: SealOptions,
  input: { port: number; victimPid: number; hostFile: string },
): Promise<Record<string, string>> {
  const jail = await launchSidecar({ seal: resolvedSeal(seal), processMemoryMb: 512, program: PROBE });
  let stdout = "";
  let stderr = "";
  jail.child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  jail.child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  jail.child.stdin.end(JSON.stringify(input) + "\n");
  const timer = setTimeout(() => jail.kill(), 30_000);
  const exit = await jail.exited;
  clearTimeout(timer);
  const line = stdout.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(line) as Record<string, string>;
  } catch {
    throw new Error(`probe failed (${JSON.stringify(exit)}): ${stdout.slice(-500)} ${stderr.slice(-1500)}`);
  }
}
