// Inside the Pyodide sidecar: the package library (built by `wasmcell setup`) mounted read-only at
// LIBRARY_MOUNT, so `import bs4` reads the host's unpacked Debian files without copying 40 MB into
// the in-memory file system (which the checkpoint would have to copy and compare after every run).
//
// Read-only three times over: bubblewrap binds the directory read-only (the kernel says EROFS), Node's
// permission model grants no fs write, and here every writing operation of Emscripten's NODEFS (the
// only NODEFS mount in the sidecar) fails with EROFS inside WASM — so a guest's `open(…, "w")` gets a
// clean OSError instead of tripping a Node permission error through the interpreter.
//
// Imported by sidecar.ts only: it may load nothing but `node:` builtins and its sibling files.

export const LIBRARY_MOUNT = "/lib/wasmcell-packages";

const EROFS = 69; // Emscripten's errno numbering
const O_ACCMODE = 3;
const O_TRUNC = 512;
const O_CREAT = 64;

type Fn = (...args: unknown[]) => unknown;
interface NodeFsType {
  node_ops: Record<string, Fn>;
  stream_ops: Record<string, Fn>;
}
interface MountFS {
  filesystems: { NODEFS: NodeFsType };
  ErrnoError: new (errno: number) => Error;
  mkdirTree(path: string): void;
  mount(type: NodeFsType, opts: { root: string }, mountpoint: string): unknown;
}

/** Mounts `hostDir` read-only at LIBRARY_MOUNT in Pyodide's file system. */
export function mountLibrary(FS: MountFS, hostDir: string): void {
  const NODEFS = FS.filesystems.NODEFS;
  const refuse = () => {
    throw new FS.ErrnoError(EROFS);
  };
  for (const op of ["setattr", "mknod", "rename", "unlink", "rmdir", "symlink"]) NODEFS.node_ops[op] = refuse;
  for (const op of ["setattr", "write", "msync"]) NODEFS.stream_ops[op] = refuse;
  const open = NODEFS.stream_ops.open!;
  NODEFS.stream_ops.open = (stream: unknown) => {
    const flags = (stream as { flags: number }).flags;
    if ((flags & O_ACCMODE) !== 0 || (flags & (O_TRUNC | O_CREAT)) !== 0) refuse();
    return open(stream);
  };
  FS.mkdirTree(LIBRARY_MOUNT);
  FS.mount(NODEFS, { root: hostDir }, LIBRARY_MOUNT);
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
