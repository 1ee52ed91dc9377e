// `sbx.files`: E2B's filesystem calls over the sandbox's workspace, an in-memory file tree on the host
// under `/home/user` (E2B's working directory), capped in bytes and entries. Every run of every
// context is handed the whole workspace as its `files` and the files the run wrote come back into it
// (./sandbox.ts), so the contexts of one sandbox share files as E2B's share one disk. Nothing here
// touches the host's file system; paths outside `/home/user` are refused (WorkspaceError).

import { InvalidOptionError, NotSupportedError, WorkspaceError } from "../../core/errors.ts";
import type { Workspace } from "../ai/workspace.ts";

/** E2B's working directory: where relative paths resolve, and the only directory there is. */
export const HOME = "/home/user";

export type FileType = "file" | "dir";

/** What `list`, `getInfo` and `rename` tell about an entry (the fields a workspace has). */
export interface EntryInfo {
  name: string;
  type: FileType;
  /** Absolute (`/home/user/data.csv`). */
  path: string;
  /** Bytes (0 for a directory). */
  size: number;
}

export interface WriteInfo {
  name: string;
  type: FileType;
  path: string;
}

/** What `write` takes: text (stored as UTF-8), bytes, a Blob or a stream of bytes. */
export type WriteData = string | ArrayBuffer | ArrayBufferView | Blob | ReadableStream<Uint8Array>;
export interface WriteEntry {
  path: string;
  data: WriteData;
}

type Format = "text" | "bytes" | "blob" | "stream";

const encoder = new TextEncoder();

export class Filesystem {
  readonly #workspace: Workspace;
  readonly #maxBytes: number;
  readonly #alive: () => void;

  /** @internal made by the sandbox (`maxBytes`: the workspace's cap); `alive` throws once it is killed. */
  constructor(workspace: Workspace, maxBytes: number, alive: () => void) {
    this.#workspace = workspace;
    this.#maxBytes = maxBytes;
    this.#alive = alive;
  }

  /** Writes a file (creating its directories), or several at once: all of them or, when one is refused, none. */
  write(path: string, data: WriteData, opts?: object): Promise<WriteInfo>;
  write(files: WriteEntry[], opts?: object): Promise<WriteInfo[]>;
  async write(target: string | WriteEntry[], data?: WriteData | object): Promise<WriteInfo | WriteInfo[]> {
    this.#alive();
    const entries: WriteEntry[] = typeof target === "string" ? [{ path: target, data: data as WriteData }] : target;
    if (!Array.isArray(entries))
      throw new InvalidOptionError("files.write", "takes a path and data, or a list of { path, data }");
    const cap = this.#maxBytes;
    const resolved: [string, Uint8Array][] = [];
    for (const entry of entries) {
      if (typeof entry !== "object" || entry === null)
        throw new InvalidOptionError("files.write", "each entry must be { path, data }");
      resolved.push([this.#workspace.resolve(entry.path), await toBytes(entry.data, entry.path, cap)]);
    }
    this.#workspace.writeAll(resolved, typeof target === "string" ? target : undefined);
    const infos = resolved.map(([key]) => ({
      name: nameOf(key),
      type: "file" as const,
      path: this.#workspace.absolute(key),
    }));
    return typeof target === "string" ? infos[0]! : infos;
  }

  /** A file's contents: text by default (UTF-8), or `{ format: "bytes" | "blob" | "stream" }`. */
  read(path: string, opts?: { format?: "text" }): Promise<string>;
  read(path: string, opts: { format: "bytes" }): Promise<Uint8Array>;
  read(path: string, opts: { format: "blob" }): Promise<Blob>;
  read(path: string, opts: { format: "stream" }): Promise<ReadableStream<Uint8Array>>;
  read(path: string, opts: { format?: Format } = {}): Promise<string | Uint8Array | Blob | ReadableStream<Uint8Array>> {
    return later(() => {
      this.#alive();
      const format = opts.format ?? "text";
      if (!["text", "bytes", "blob", "stream"].includes(format))
        throw new InvalidOptionError(
          "files.read.format",
          `must be "text", "bytes", "blob" or "stream", not ${JSON.stringify(format)}`,
        );
      const bytes = this.#workspace.read(this.#workspace.resolve(path), path);
      if (bytes === null) throw new WorkspaceError(path, "no such file");
      if (format === "bytes") return bytes;
      if (format === "blob") return new Blob([bytes]);
      if (format === "stream") return new Blob([bytes]).stream();
      return new TextDecoder().decode(bytes);
    });
  }

  /** The entries of a directory (`depth` 1 by default: its own entries; more goes down that many levels). */
  list(path: string, opts: { depth?: number } = {}): Promise<EntryInfo[]> {
    return later(() => {
      this.#alive();
      const depth = opts.depth ?? 1;
      if (!Number.isSafeInteger(depth) || depth < 1)
        throw new InvalidOptionError("files.list.depth", "must be a positive integer");
      const key = this.#workspace.resolve(path);
      if (this.#workspace.typeOf(key) === undefined) throw new WorkspaceError(path, "no such directory");
      const out: EntryInfo[] = [];
      const walk = (dir: string, level: number): void => {
        for (const entry of this.#workspace.list(dir, path) ?? []) {
          const child = dir === "" ? entry.name : `${dir}/${entry.name}`;
          out.push(this.#info(child)!);
          if (entry.type === "directory" && level < depth) walk(child, level + 1);
        }
      };
      walk(key, 1);
      return out;
    });
  }

  exists(path: string): Promise<boolean> {
    return later(() => {
      this.#alive();
      return this.#workspace.typeOf(this.#workspace.resolve(path)) !== undefined;
    });
  }

  getInfo(path: string): Promise<EntryInfo> {
    return later(() => {
      this.#alive();
      const info = this.#info(this.#workspace.resolve(path));
      if (!info) throw new WorkspaceError(path, "no such file or directory");
      return info;
    });
  }

  /** Makes a directory and its parents: false when it was already there. */
  makeDir(path: string): Promise<boolean> {
    return later(() => {
      this.#alive();
      const key = this.#workspace.resolve(path);
      if (this.#workspace.typeOf(key) === "directory") return false;
      this.#workspace.mkdir(key, true, path);
      return true;
    });
  }

  /** Removes a file, or a directory with everything under it (nothing there: no error, as E2B). */
  remove(path: string): Promise<void> {
    return later(() => {
      this.#alive();
      const key = this.#workspace.resolve(path);
      const type = this.#workspace.typeOf(key);
      if (type === "directory") this.#workspace.deleteTree(key);
      else if (type === "file") this.#workspace.deleteFile(key, path);
    });
  }

  /** Moves a file (not a directory) to a new path. */
  rename(oldPath: string, newPath: string): Promise<EntryInfo> {
    return later(() => {
      this.#alive();
      const from = this.#workspace.resolve(oldPath);
      const to = this.#workspace.resolve(newPath);
      if (this.#workspace.typeOf(from) === "directory")
        throw new WorkspaceError(oldPath, "renaming a directory is not supported; move its files");
      const bytes = this.#workspace.read(from, oldPath);
      if (bytes === null) throw new WorkspaceError(oldPath, "no such file");
      if (from !== to) {
        this.#workspace.write(to, bytes, newPath);
        this.#workspace.deleteFile(from, oldPath);
      }
      return this.#info(to)!;
    });
  }

  watchDir(..._args: unknown[]): Promise<never> {
    return later(() => {
      throw new NotSupportedError(
        "files.watchDir",
        "nothing runs in the background here: code runs only inside runCode, and the files it wrote are in the workspace when runCode returns",
      );
    });
  }

  #info(key: string): EntryInfo | undefined {
    const stat = this.#workspace.stat(key);
    if (!stat) return undefined;
    return {
      name: nameOf(key),
      type: stat.type === "directory" ? "dir" : "file",
      path: this.#workspace.absolute(key),
      size: stat.size,
    };
  }
}

function nameOf(key: string): string {
  return key.slice(key.lastIndexOf("/") + 1);
}

/** Bytes of what `write` was given; a stream is read only as far as the workspace could hold. */
/** `fn`'s value as a promise, or its throw as a rejection (E2B's calls are all asynchronous). */
function later<T>(fn: () => T): Promise<T> {
  return new Promise((resolve) => resolve(fn()));
}

async function toBytes(data: unknown, path: string, cap: number): Promise<Uint8Array> {
  if (typeof data === "string") return encoder.encode(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data.slice(0));
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice();
  if (data instanceof Blob) {
    if (data.size > cap) throw new WorkspaceError(path, `the file is over the workspace's ${cap}-byte cap`);
    return new Uint8Array(await data.arrayBuffer());
  }
  if (data instanceof ReadableStream) {
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of data as ReadableStream<unknown>) {
      if (!(chunk instanceof Uint8Array))
        throw new InvalidOptionError("files.write.data", "a stream must yield Uint8Array chunks");
      size += chunk.byteLength;
      if (size > cap) throw new WorkspaceError(path, `the file is over the workspace's ${cap}-byte cap`);
      chunks.push(chunk);
    }
    const out = new Uint8Array(size);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    return out;
  }
  throw new InvalidOptionError(
    "files.write.data",
    "must be a string, an ArrayBuffer, a typed array, a Blob or a ReadableStream",
  );
}
