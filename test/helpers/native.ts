// One native-tier sandbox for a test file, with the production seal (seccomp answers EPERM).
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { Limits, RunResult } from "../../src/core/types.ts";

let shared: Promise<Sandbox> | undefined;

export function nativeSandbox(): Promise<Sandbox> {
  shared ??= createSandbox({ python: { engine: "native" } });
  return shared;
}

export async function runNative(
  code: string,
  limits: Partial<Limits> = {},
  files?: Record<string, string | Uint8Array>,
): Promise<RunResult> {
  const sandbox = await nativeSandbox();
  return sandbox.run({
    language: "python",
    engine: "native",
    code,
    limits: { timeoutMs: 10_000, ...limits },
    ...(files ? { files } : {}),
  });
}

export async function closeNative(): Promise<void> {
  const s = shared;
  shared = undefined;
  await (await s)?.close();
}

/** Python prelude: `probe(fn)` → "ALLOWED" or "ExcName:ERRNO"; `raw(nr, *args)` → "ok" or errno name (ctypes syscall). */
export const PROBES = `
import os, ctypes, errno
_libc = ctypes.CDLL(None, use_errno=True)
def raw(nr, *args):
    r = _libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
def probe(fn):
    try:
        fn()
        return "ALLOWED"
    except BaseException as e:
        code = getattr(e, "errno", None)
        return type(e).__name__ + (":" + errno.errorcode.get(code, str(code)) if code else "")
`;

/**
 * The two warm parents a stateless native run may be a child of (src/engines/native/route.ts): a
 * run that imports only the standard library goes to the light one, one that imports the stack to
 * the stack's. Sibling threats run on both: `route` turns a test's code into code for that parent.
 */
export const NATIVE_PARENTS = [
  { name: "light parent", light: true, route: (code: string) => code },
  {
    name: "stack parent",
    light: false,
    route: (code: string) => `import numpy  # a run that imports the stack is a child of the stack's parent\n${code}`,
  },
] as const;
