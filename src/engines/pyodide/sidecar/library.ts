// Read-only host directories in Pyodide's file system: the package library (`wasmcell setup`) at
// LIBRARY_MOUNT and the host's tz database. `import bs4` reads the host's unpacked Debian files
// without copying 40 MB into the in-memory file system (which the checkpoint would copy and compare
// after every run). Read-only three times over: bubblewrap binds the directory read-only (EROFS from
// the kernel), Node's permission model grants no fs write, and here every writing operation of
// Emscripten's NODEFS fails with EROFS inside WASM, so a guest's open(..., "w") is a clean OSError.
// (This holds for every NODEFS mount in the sidecar: the tz database is read-only too.)

export const LIBRARY_MOUNT = "/lib/wasmcell-packages";
const ZONEINFO_MOUNT = "/usr/share/zoneinfo";

const EROFS = 69; // Emscripten's errno numbering
const O_ACCMODE = 3;
const O_TRUNC = 512;
const O_CREAT = 64;

type Fn = (...args: unknown[]) => unknown;
interface NodeFsType {
  node_ops: Record<string, Fn>;
  stream_ops: Record<string, Fn>;
}
export interface MountFS {
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
 * The host's tz database, read-only (the jail's bind and Node's read-only permission model both
 * refuse writes), at the path on Python's default TZPATH: zoneinfo works without a tzdata package.
 */
export function mountZoneinfo(FS: MountFS, hostDir: string): void {
  FS.mkdirTree(ZONEINFO_MOUNT);
  FS.mount(FS.filesystems.NODEFS, { root: hostDir }, ZONEINFO_MOUNT);
}
