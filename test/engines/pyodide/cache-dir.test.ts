// Where the snapshot and the package library are cached: the caller's directory when named, else the
// XDG cache, else (as root) /var/cache/wasmcell, which the jail's unprivileged uid can reach where a
// 0700 root home cannot be traversed, else ~/.cache/wasmcell.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { describe, it } from "node:test";

const probe = `import { cacheDir } from ${JSON.stringify(new URL("../../../src/engines/pyodide/boot-image.ts", import.meta.url).href)}; console.log(cacheDir());`;
const cacheDirWith = (env: Record<string, string>): string =>
  execFileSync(process.execPath, ["--input-type=module", "-e", probe], {
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
  }).trim();

describe("cacheDir", () => {
  it("WASMCELL_CACHE_DIR wins, then XDG_CACHE_HOME", () => {
    assert.equal(cacheDirWith({ HOME: "/h", WASMCELL_CACHE_DIR: "/c", XDG_CACHE_HOME: "/x" }), "/c");
    assert.equal(cacheDirWith({ HOME: "/h", XDG_CACHE_HOME: "/x" }), "/x/wasmcell");
  });

  it("as root the system cache directory, else the home's", () => {
    const root = process.getuid?.() === 0;
    assert.equal(cacheDirWith({ HOME: "/h" }), root ? "/var/cache/wasmcell" : "/h/.cache/wasmcell");
  });
});
