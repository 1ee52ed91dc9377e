// Loading Pyodide in the sidecar: the little of its API the sidecar uses, the load options (what the
// guest's `js` module would hold: nothing), and the Python files beside this one that the sidecar runs
// in the interpreter (read from the sidecar's own read-only folder, the one the permission model
// allows as a whole).

import { readFileSync } from "node:fs";
import type { PyodideModule } from "./checkpoint.ts";

export interface PyProxyFn {
  (...args: unknown[]): unknown;
  destroy(): void;
}
export interface PyodideAPI {
  _module: PyodideModule;
  runPython(code: string): unknown;
  setStdout(options: { write(buffer: Uint8Array): number }): void;
  setStderr(options: { write(buffer: Uint8Array): number }): void;
  setInterruptBuffer(buffer: unknown): void;
  globals: { get(name: string): PyProxyFn | undefined };
  makeMemorySnapshot(): Uint8Array;
}

/** The guest's home and working directory (setup.py changes into it). */
export const WORKDIR = "/home/pyodide";
/** Where the harness and pyfetch.py are installed in Pyodide's file system. */
export const SITE_PACKAGES = "/lib/python3.14/site-packages";
/** The module name the harness is installed under (setup.py imports it). */
export const HARNESS_MODULE = "wasmcell_harness";
/** The display module's name (the harness imports it; src/engines/lib/python/wasmcell_display.py). */
export const DISPLAY_MODULE = "wasmcell_display";

/** The text of a Python file of this folder (setup.py, net.py, harden.py). */
export function pythonSource(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), "utf8");
}

export async function loadPyodideRuntime(
  pyodideDir: string,
  fromSnapshot: Uint8Array | undefined,
  makeSnapshot: boolean,
): Promise<PyodideAPI> {
  const mod = (await import(`${pyodideDir}/pyodide.mjs`)) as { loadPyodide(options: object): Promise<PyodideAPI> };
  const options: Record<string, unknown> = {
    indexURL: pyodideDir.endsWith("/") ? pyodideDir : `${pyodideDir}/`,
    // An empty, prototype-less object: `import js` (if it were reachable) holds nothing, and has no
    // `.constructor` leading to the realm's Function.
    jsglobals: Object.create(null) as object,
    env: { HOME: WORKDIR },
    fullStdLib: false,
    checkAPIVersion: true,
  };
  if (makeSnapshot) options._makeSnapshot = true;
  if (fromSnapshot && fromSnapshot.length > 0) options._loadSnapshot = fromSnapshot;
  return mod.loadPyodide(options);
}

/**
 * Pyodide restores a memory snapshot with one `HEAP8.set` into the memory the module was instantiated
 * with, and never grows it first: a snapshot taken after the library's imports (≈38 MB) is larger than
 * that initial memory, and the restore fails with "offset is out of bounds". While Pyodide loads, the
 * module's memory is grown to the snapshot's size as soon as it exists (before Emscripten makes its
 * views of it). Returns the function that puts `WebAssembly.instantiate` back (before the checkpoint,
 * whose fingerprint of the built-ins must see the original).
 */
export function reserveMemoryFor(bytes: number): () => void {
  type Instantiate = (...args: unknown[]) => Promise<unknown>;
  const wasm = (globalThis as unknown as { WebAssembly: { instantiate: Instantiate } }).WebAssembly;
  const real = wasm.instantiate;
  wasm.instantiate = async function instantiate(this: unknown, ...args: unknown[]) {
    const result = (await real.apply(this, args)) as { instance?: { exports: Record<string, unknown> } };
    const exports = result.instance?.exports ?? (result as { exports?: Record<string, unknown> }).exports;
    const memory = exports?.memory as { buffer: ArrayBuffer; grow(pages: number): number } | undefined;
    if (memory && memory.buffer.byteLength < bytes) memory.grow(Math.ceil((bytes - memory.buffer.byteLength) / 65536));
    return result;
  };
  return () => {
    wasm.instantiate = real;
  };
}
