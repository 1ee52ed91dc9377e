// A sandbox session's files: a host-side in-memory tree under one base directory, which every command
// and every file call of the session shares. Nothing here touches the host's file system.
//
// Paths are confined: an absolute path must lie under the base directory, `..` may not climb above it,
// and backslashes, NUL bytes and over-long names are refused (a run's file map splits on backslashes,
// so `a\b` would land at `a/b` inside the guest). Caps bound the whole tree (bytes and entries), so a
// model cannot grow host memory without limit by writing files.

import { WorkspaceError } from "../../core/errors.ts";
import { checkRelativePath } from "../../options/index.ts";

export interface WorkspaceCaps {
  /** All file bytes together. */
  maxBytes: number;
  /** Files and directories together. */
  maxEntries: number;
}

export type EntryType = "file" | "directory";

export class Workspace {
  /** The absolute base directory, without a trailing slash (`/workspace`). */
  readonly base: string;
  readonly #caps: WorkspaceCaps;
  /** Keys are paths relative to the base, normalised (`a/b.txt`); "" is the base itself. */
  readonly #files = new Map<string, Uint8Array>();
  /** Every directory that exists besides the base, including each file's parents. */
  readonly #dirs = new Set<string>();
  /** When each entry was last written or made, in ms since the epoch (for `ls -l` and `ls -t`). */
  readonly #times = new Map<string, number>([["", Date.now()]]);
  #bytes = 0;

  constructor(base: string, caps: WorkspaceCaps) {
    if (!/^\/[^\0\\]*$/.test(base) || base.split("/").some((p) => p === "." || p === "..")) {
      throw new WorkspaceError(base, "the base directory must be an absolute path without '.', '..' or backslashes");
    }
    this.base = base.replace(/\/+$/, "") || "/";
    this.#caps = caps;
  }

  /**
   * A path as a key relative to the base: relative paths resolve against `cwd` (a key), absolute ones
   * must lie under the base. Throws a WorkspaceError naming the problem.
   */
  resolve(given: unknown, cwd = ""): string {
    if (typeof given !== "string") throw new WorkspaceError(String(given), "a path must be a string");
    let path = given;
    if (path.includes("\0")) throw new WorkspaceError(path, "the path contains a NUL byte");
    if (path.includes("\\")) throw new WorkspaceError(path, "the path contains a backslash");
    if (path.length > 4096) throw new WorkspaceError(path, "the path is longer than 4096 characters");
    let parts: string[];
    if (path.startsWith("/")) {
      const prefix = this.base === "/" ? "/" : `${this.base}/`;
      if (path !== this.base && !path.startsWith(prefix)) {
        throw new WorkspaceError(path, `the path is outside the base directory ${this.base}`);
      }
      parts = [];
      path = path.slice(prefix.length);
    } else parts = cwd === "" ? [] : cwd.split("/");
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === "..") {
        if (parts.length === 0)
          throw new WorkspaceError(given, `the path climbs above the base directory ${this.base}`);
        parts.pop();
      } else parts.push(part);
    }
    const key = parts.join("/");
    const problem = key === "" ? undefined : checkRelativePath(key);
    if (problem) throw new WorkspaceError(given, problem);
    return key;
  }

  /** The absolute path of a key, as a command would print it. */
  absolute(key: string): string {
    if (key === "") return this.base;
    return this.base === "/" ? `/${key}` : `${this.base}/${key}`;
  }

  typeOf(key: string): EntryType | undefined {
    if (key === "" || this.#dirs.has(key)) return "directory";
    return this.#files.has(key) ? "file" : undefined;
  }

  stat(key: string): { type: EntryType; size: number } | null {
    const type = this.typeOf(key);
    if (!type) return null;
    return { type, size: type === "file" ? this.#files.get(key)!.byteLength : 0 };
  }

  /** When an entry was last written (a file) or made (a directory), in ms since the epoch. */
  mtime(key: string): number | undefined {
    return this.#times.get(key);
  }

  /** The file's bytes (a copy), or null when nothing is there. Throws for a directory. */
  read(key: string, asGiven = key): Uint8Array | null {
    if (this.typeOf(key) === "directory") throw new WorkspaceError(asGiven, "is a directory");
    const bytes = this.#files.get(key);
    return bytes ? bytes.slice() : null;
  }

  /** Writes one file, creating its parents. Throws for a directory, a file as a parent, or a cap. */
  write(key: string, bytes: Uint8Array, asGiven = key): void {
    this.writeAll([[key, bytes]], asGiven);
  }

  /** Writes several files at once: all of them or, when one is refused, none. */
  writeAll(entries: readonly (readonly [string, Uint8Array])[], asGiven?: string): void {
    let bytes = this.#bytes;
    const newDirs = new Set<string>();
    const written = new Map<string, Uint8Array>();
    for (const [key, content] of entries) {
      const shown = asGiven ?? this.absolute(key);
      if (key === "" || this.#dirs.has(key) || newDirs.has(key)) throw new WorkspaceError(shown, "is a directory");
      for (const dir of parentsOf(key)) {
        if (this.#files.has(dir) || written.has(dir))
          throw new WorkspaceError(shown, `${this.absolute(dir)} is a file`);
        if (!this.#dirs.has(dir)) newDirs.add(dir);
      }
      bytes += content.byteLength - ((written.get(key) ?? this.#files.get(key))?.byteLength ?? 0);
      written.set(key, content);
    }
    const added = [...written.keys()].filter((k) => !this.#files.has(k)).length + newDirs.size;
    if (bytes > this.#caps.maxBytes) {
      throw new WorkspaceError(
        asGiven ?? "",
        `the workspace would hold ${bytes} bytes, over its ${this.#caps.maxBytes}-byte cap`,
      );
    }
    if (this.#files.size + this.#dirs.size + added > this.#caps.maxEntries) {
      throw new WorkspaceError(
        asGiven ?? "",
        `the workspace would hold more than ${this.#caps.maxEntries} files and directories`,
      );
    }
    const now = Date.now();
    for (const dir of newDirs) this.#dirs.add(dir);
    for (const [key, content] of written) this.#files.set(key, content.slice());
    for (const key of [...newDirs, ...written.keys()]) this.#times.set(key, now);
    this.#bytes = bytes;
  }

  /** Makes a directory; with `parents`, its missing parents too and no complaint when it exists. */
  mkdir(key: string, parents: boolean, asGiven = key): void {
    const chain = [...parentsOf(key), key];
    const missing = chain.filter((d) => this.typeOf(d) === undefined);
    for (const d of chain) {
      if (this.#files.has(d)) throw new WorkspaceError(asGiven, d === key ? "File exists" : "Not a directory");
    }
    if (!parents) {
      if (this.typeOf(key) === "directory") throw new WorkspaceError(asGiven, "File exists");
      if (missing.length > 1) throw new WorkspaceError(asGiven, "No such file or directory");
    }
    if (this.#files.size + this.#dirs.size + missing.length > this.#caps.maxEntries) {
      throw new WorkspaceError(
        asGiven,
        `the workspace would hold more than ${this.#caps.maxEntries} files and directories`,
      );
    }
    const now = Date.now();
    for (const d of missing) {
      this.#dirs.add(d);
      this.#times.set(d, now);
    }
  }

  /** The entries directly in a directory, or null when it does not exist. Throws for a file. */
  list(key: string, asGiven = key): { name: string; type: EntryType }[] | null {
    const type = this.typeOf(key);
    if (type === undefined) return null;
    if (type === "file") throw new WorkspaceError(asGiven, "is not a directory");
    const prefix = key === "" ? "" : `${key}/`;
    const entries: { name: string; type: EntryType }[] = [];
    for (const [set, kind] of [
      [this.#dirs, "directory"],
      [this.#files.keys(), "file"],
    ] as const) {
      for (const k of set) {
        if (k.startsWith(prefix) && !k.slice(prefix.length).includes("/"))
          entries.push({ name: k.slice(prefix.length), type: kind });
      }
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Deletes one file: true when it was there. Throws for a directory. */
  deleteFile(key: string, asGiven = key): boolean {
    if (this.typeOf(key) === "directory") throw new WorkspaceError(asGiven, "is a directory");
    const bytes = this.#files.get(key);
    if (!bytes) return false;
    this.#files.delete(key);
    this.#times.delete(key);
    this.#bytes -= bytes.byteLength;
    return true;
  }

  /** Deletes a directory and everything under it (never the base). */
  deleteTree(key: string): void {
    if (key === "") throw new WorkspaceError(this.base, "refusing to remove the base directory");
    const prefix = `${key}/`;
    for (const k of [...this.#files.keys()]) if (k.startsWith(prefix)) this.deleteFile(k);
    for (const d of [...this.#dirs]) {
      if (d === key || d.startsWith(prefix)) {
        this.#dirs.delete(d);
        this.#times.delete(d);
      }
    }
  }

  /** The files under a directory, keyed relative to it (what a run started there is handed). */
  filesUnder(key: string): Record<string, Uint8Array> {
    const prefix = key === "" ? "" : `${key}/`;
    const out: Record<string, Uint8Array> = {};
    for (const [k, bytes] of this.#files) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = bytes;
    return out;
  }
}

function parentsOf(key: string): string[] {
  const parts = key.split("/");
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join("/"));
  return out;
}
