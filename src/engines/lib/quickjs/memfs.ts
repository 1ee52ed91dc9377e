// The guest's `fs`: an in-memory file map over request.files. There is no real filesystem behind it.
// Paths are relative to the working directory (`./a.txt`, `a.txt` and `dir/b.csv` work; absolute paths
// and `..` are refused). Files the run creates or changes come back in result.files, within
// limits.maxFiles and limits.maxFileBytes.

import { checkRelativePath, normalizePath } from "../../../options/index.ts";
import type { GuestError, OutputFile } from "../../../core/types.ts";
import { checkReturnedFiles, mimeTypeOf } from "../../../kit/files.ts";

export class FsError extends Error {
  constructor(code: string, message: string) {
    super(`${code}: ${message}`);
    this.name = "Error";
  }
}

/** Thrown when a write would go past maxFiles/maxFileBytes: the run ends with `verdict`. */
export class FileLimitError extends Error {
  readonly verdict: GuestError;
  constructor(verdict: GuestError) {
    super(verdict.message);
    this.verdict = verdict;
  }
}

export class MemFs {
  readonly #files: Map<string, Uint8Array>;
  readonly #inputs: Map<string, Uint8Array>;
  readonly #maxFiles: number;
  readonly #maxBytes: number;

  constructor(inputs: Map<string, Uint8Array>, maxFiles: number, maxBytes: number) {
    this.#inputs = inputs;
    this.#files = new Map(inputs);
    this.#maxFiles = maxFiles;
    this.#maxBytes = maxBytes;
  }

  resolve(path: unknown): string {
    if (typeof path !== "string") throw new TypeError('The "path" argument must be a string');
    const p = path.startsWith("./") ? path.slice(2) : path;
    const problem = checkRelativePath(p);
    if (problem)
      throw new FsError("EACCES", `${problem}: '${path}' (the sandbox has only an in-memory working directory)`);
    return normalizePath(p);
  }

  read(path: string): Uint8Array {
    const bytes = this.#files.get(this.resolve(path));
    if (!bytes) throw new FsError("ENOENT", `no such file or directory, open '${path}'`);
    return bytes;
  }

  write(path: string, bytes: Uint8Array, append = false): void {
    const key = this.resolve(path);
    const prev = this.#files.get(key);
    const next = append && prev ? concat(prev, bytes) : bytes;
    const trial = new Map(this.#files);
    trial.set(key, next);
    const changed = this.#changed(trial);
    let total = 0;
    for (const [, b] of changed) total += b.byteLength;
    const over = checkReturnedFiles(
      { length: changed.length, bytes: total },
      { maxFiles: this.#maxFiles, maxFileBytes: this.#maxBytes },
    );
    if (over) throw new FileLimitError(over);
    this.#files.set(key, next);
  }

  exists(path: string): boolean {
    let key: string;
    try {
      key = this.resolve(path);
    } catch {
      return false;
    }
    if (this.#files.has(key)) return true;
    for (const name of this.#files.keys()) if (name.startsWith(`${key}/`)) return true;
    return false;
  }

  readdir(dir: unknown): string[] {
    const d = dir === undefined || dir === "." || dir === "./" || dir === "" ? "" : this.resolve(dir);
    const prefix = d === "" ? "" : `${d}/`;
    const names = new Set<string>();
    for (const name of this.#files.keys()) {
      if (!name.startsWith(prefix)) continue;
      const rest = name.slice(prefix.length);
      names.add(rest.split("/")[0] ?? rest);
    }
    if (names.size === 0 && d !== "")
      throw new FsError("ENOENT", `no such file or directory, scandir '${String(dir)}'`);
    return [...names].sort();
  }

  unlink(path: string): void {
    const key = this.resolve(path);
    if (!this.#files.delete(key)) throw new FsError("ENOENT", `no such file or directory, unlink '${path}'`);
  }

  /** Files created or changed by the run (deleted inputs are simply absent). */
  outputs(): OutputFile[] {
    return this.#changed(this.#files).map(([path, bytes]) => ({ path, bytes, mimeType: mimeTypeOf(path) }));
  }

  #changed(files: Map<string, Uint8Array>): [string, Uint8Array][] {
    const out: [string, Uint8Array][] = [];
    for (const [path, bytes] of files) {
      const before = this.#inputs.get(path);
      if (before !== bytes && !(before && equalBytes(before, bytes))) out.push([path, bytes]);
    }
    return out;
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
