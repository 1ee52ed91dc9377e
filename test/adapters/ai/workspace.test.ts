// The sandbox session's workspace: paths are confined to the base directory, and the caps hold.
// Threat: a model (or a guest run's returned file list) naming a path that escapes the base directory,
// or growing host memory without bound by writing files.

import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Workspace } from "../../../src/adapters/ai/workspace.ts";
import { WorkspaceError } from "../../../src/core/errors.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const refused = (pattern: RegExp) => (e: unknown) =>
  e instanceof WorkspaceError && e.code === "WORKSPACE" && pattern.test(e.message);

describe("workspace confinement", () => {
  const ws = () => new Workspace("/workspace", { maxBytes: 100, maxEntries: 10 });

  test("paths resolve inside the base directory", () => {
    const w = ws();
    assert.equal(w.resolve("a/b.txt"), "a/b.txt");
    assert.equal(w.resolve("./a//b/../c.txt"), "a/c.txt");
    assert.equal(w.resolve("/workspace/x/y"), "x/y");
    assert.equal(w.resolve("/workspace"), "");
    assert.equal(w.resolve("../b", "sub"), "b");
  });

  test("path traversal: '..' cannot climb above the base directory", () => {
    const w = ws();
    for (const p of ["..", "../etc/passwd", "a/../../b", "/workspace/../etc"]) {
      assert.throws(() => w.resolve(p), refused(/climbs above the base directory/), p);
    }
    assert.throws(() => w.resolve("../../x", "sub"), refused(/climbs above/));
  });

  test("path traversal: absolute paths outside the base are refused", () => {
    const w = ws();
    for (const p of ["/etc/passwd", "/", "/workspacex/a", "/tmp/data.csv"]) {
      assert.throws(() => w.resolve(p), refused(/outside the base directory \/workspace/), p);
    }
  });

  test("backslashes, NUL bytes and non-strings are refused", () => {
    const w = ws();
    assert.throws(() => w.resolve("a\\..\\..\\b"), refused(/backslash/));
    assert.throws(() => w.resolve("a\0b"), refused(/NUL/));
    assert.throws(() => w.resolve(42), refused(/must be a string/));
    assert.throws(() => w.resolve("x".repeat(300)), refused(/longer than 255/));
  });

  test("a file as a directory, and a directory as a file, are refused", () => {
    const w = ws();
    w.write("a/b.txt", bytes("x"));
    assert.equal(w.typeOf("a"), "directory");
    assert.throws(() => w.write("a", bytes("y")), refused(/is a directory/));
    assert.throws(() => w.write("a/b.txt/c", bytes("y")), refused(/is a file/));
    assert.throws(() => w.read("a"), refused(/is a directory/));
    assert.throws(() => w.deleteFile("a"), refused(/is a directory/));
    assert.throws(() => w.list("a/b.txt"), refused(/not a directory/));
    assert.deepEqual(w.list("a"), [{ name: "b.txt", type: "file" }]);
    assert.equal(w.deleteFile("a/b.txt"), true);
    assert.equal(w.deleteFile("a/b.txt"), false);
    assert.deepEqual(w.list("a"), []);
  });

  test("memory exhaustion: the byte and entry caps hold, and a refused batch writes nothing", () => {
    const w = ws();
    w.write("a", new Uint8Array(60));
    assert.throws(() => w.write("b", new Uint8Array(41)), refused(/over its 100-byte cap/));
    w.write("a", new Uint8Array(10)); // overwriting frees the old bytes
    w.write("b", new Uint8Array(90));
    assert.throws(
      () =>
        w.writeAll([
          ["c", new Uint8Array(0)],
          ["d/e/f/g/h/i/j/k/l", new Uint8Array(0)],
        ]),
      refused(/more than 10 files and directories/),
    );
    assert.equal(w.typeOf("c"), undefined);
    assert.throws(() => w.mkdir("m/n/o/p/q/r/s/t/u", true), refused(/more than 10/));
  });

  test("the base directory cannot be removed, and stays listed", () => {
    const w = ws();
    assert.throws(() => w.deleteTree(""), refused(/base directory/));
    assert.deepEqual(w.stat(""), { type: "directory", size: 0 });
    assert.throws(() => new Workspace("relative", { maxBytes: 1, maxEntries: 1 }), refused(/absolute path/));
    assert.throws(() => new Workspace("/a/../b", { maxBytes: 1, maxEntries: 1 }), refused(/'\.\.'/));
  });
});
