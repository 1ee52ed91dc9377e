// The in-process guards around Pyodide (the last, weakest layers of the seal; what stops an escape is
// the jail, seccomp and Node's permission model, see ../launch.ts):
// - a `process.binding` stub: Pyodide's Emscripten NODEFS calls `process.binding("constants")` at
//   load, which the permission model denies; the stub answers that one call and throws for everything
//   else, which also removes `process.binding("spawn_sync")` as an escape hatch when the model is off.
// - guest hardening (harden.py): `js`, `pyodide_js`, `pyodide`, `_pyodide`, `_pyodide_core` replaced
//   in sys.modules and blocked from import; Pyodide's own modules cut off from the bridge (the event
//   loop is the sandbox's, no JsProxy or `_pyodide_core` function left in their globals, `_imp` cannot
//   make `_pyodide_core` again); gc introspection (the easy way to find a leftover JsProxy) refused
//   by an audit hook. Together with the empty `jsglobals` (runtime.ts) and
//   `--disallow-code-generation-from-strings`, a JsProxy that still leaks out cannot turn
//   `.constructor.constructor` into code. (Freezing the intrinsic prototypes was tried and breaks
//   Pyodide's promise conversion, which assigns `constructor` on its own objects.)
// - no sockets at the syscall layer: Emscripten's socket emulation (SOCKFS) under Node has nowhere to
//   go here (no network in the jail, none in the permission model) and fails slowly, or crashes the
//   interpreter (a listening socket wants the `ws` package). Every socket starts as
//   SOCKFS.createSocket, called by the `socket` syscall in JavaScript: refusing there stops `_socket`,
//   ctypes' libc socket() and anything else compiled to WASM, and no Python can undo it. harden.py's
//   audit hook gives the same refusal a message that says what works instead.
// - Node's unused web globals removed before the checkpoint (dropUnusedWebGlobals).
// - no stack-trace hook (lockStackTraceHook): V8 hands `Error.prepareStackTrace` the call sites of
//   every error, and a wasm frame's `getThis()` is the WebAssembly.Instance (its function table, its
//   memory). A guest holding any JsProxy reaches `Error` through a thrown error's constructor chain;
//   a Python callable set there got the Instance and rewrote a table entry. The hook is pinned to
//   undefined, so every stack is V8's plain text.

import { constants as fsConstants } from "node:fs";
import { constants as osConstants } from "node:os";
import { pythonSource, type PyodideAPI } from "./runtime.ts";

export function stubProcessBinding(): void {
  const bindingConstants = Object.freeze({ fs: fsConstants, os: osConstants });
  Object.defineProperty(process, "binding", {
    value: (name: string) => {
      if (name === "constants") return bindingConstants;
      throw new Error(`process.binding(${JSON.stringify(name)}) is not available in the sidecar`);
    },
    writable: false,
    configurable: false,
  });
}

const ENETUNREACH = 40; // Emscripten's errno numbering

interface SocketFS {
  SOCKFS: { createSocket(...args: unknown[]): unknown };
  FS: { ErrnoError: new (errno: number) => Error };
}

/** Every socket() fails with ENETUNREACH, inside WASM, before any socket exists. */
export function refuseSockets(M: object): void {
  const { SOCKFS, FS } = M as SocketFS;
  if (typeof SOCKFS?.createSocket !== "function") throw new Error("Pyodide has no SOCKFS.createSocket to refuse");
  SOCKFS.createSocket = () => {
    throw new FS.ErrnoError(ENETUNREACH);
  };
}

/**
 * The guest-level blocks on the JavaScript bridge. Run after every load: Pyodide's own start-up from
 * a snapshot imports _pyodide_core and friends, so these cannot be in the snapshot.
 */
export function hardenGuest(py: PyodideAPI): void {
  py.runPython(pythonSource("harden.py"));
}

/**
 * Node's web globals that nothing in the sidecar uses, removed before the checkpoint. Node installs
 * them as lazy properties: reading one's descriptor (which the checkpoint's fingerprint of the JS
 * realm does for every global) loads its implementation (undici for `FormData` & co., web streams),
 * which cost 0.2–0.6 s of every sidecar start (and memory) on a loaded 2-core machine. Deleting does
 * not load them. Pyodide uses `fetch` only to load files by URL and `WebSocket` only for Emscripten's
 * socket emulation; the sidecar has no network of its own, so both would fail anyway.
 */
const UNUSED_WEB_GLOBALS = [
  "fetch",
  "FormData",
  "Headers",
  "Request",
  "Response",
  "WebSocket",
  "EventSource",
  "MessageEvent",
  "CloseEvent",
  "ErrorEvent",
  "ReadableStream",
  "ReadableStreamDefaultReader",
  "ReadableStreamBYOBReader",
  "ReadableStreamBYOBRequest",
  "ReadableByteStreamController",
  "ReadableStreamDefaultController",
  "TransformStream",
  "TransformStreamDefaultController",
  "WritableStream",
  "WritableStreamDefaultController",
  "WritableStreamDefaultWriter",
  "ByteLengthQueuingStrategy",
  "CountQueuingStrategy",
  "TextEncoderStream",
  "TextDecoderStream",
  "CompressionStream",
  "DecompressionStream",
  "Storage",
  "localStorage",
  "sessionStorage",
];

export function dropUnusedWebGlobals(): void {
  for (const name of UNUSED_WEB_GLOBALS) Reflect.deleteProperty(globalThis, name);
}

/**
 * Pins `Error.prepareStackTrace` to undefined and `Error.captureStackTrace` to V8's own, neither
 * writable nor configurable: nothing in the realm can install a hook that sees call sites (the
 * sidecar and Pyodide use neither; Node's internals keep their own copies). Assigning either then
 * throws in strict code (a guest's JsProxy assignment is a JsException), and the realm's
 * fingerprint (checkpoint.ts) records both.
 */
export function lockStackTraceHook(): void {
  const pin = (key: "prepareStackTrace" | "captureStackTrace", value: unknown) =>
    Object.defineProperty(Error, key, { value, writable: false, configurable: false, enumerable: false });
  pin("prepareStackTrace", undefined);
  pin("captureStackTrace", Reflect.getOwnPropertyDescriptor(Error, "captureStackTrace")?.value);
}
