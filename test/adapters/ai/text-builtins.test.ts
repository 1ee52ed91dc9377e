// head, tail and wc in a sandbox session print what GNU coreutils print for the same files (the
// expected strings are GNU's output), and refuse what they do not implement with exit 2.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { openShell, type Shell } from "./session-helper.ts";

const FILES = { "a.txt": "hello world\nfoo\nbar baz qux\n", "n.txt": "a\nb\nc", "b.txt": "1234567890".repeat(20) };

describe("head, tail, wc", () => {
  let shell: Shell;
  before(async () => {
    shell = await openShell({ files: FILES });
  });
  after(() => shell.sandbox.close());

  const cases: [string, string][] = [
    ["head a.txt", FILES["a.txt"]],
    ["head -n 1 a.txt", "hello world\n"],
    ["head -n1 a.txt", "hello world\n"],
    ["head -2 a.txt", "hello world\nfoo\n"],
    ["head -n -1 a.txt", "hello world\nfoo\n"],
    ["head -n +2 n.txt", "a\nb\n"],
    ["head -c 5 a.txt", "hello"],
    ["head -c -2 n.txt", "a\nb"],
    ["head -n 1 a.txt n.txt", "==> a.txt <==\nhello world\n\n==> n.txt <==\na\n"],
    ["tail -n 1 a.txt", "bar baz qux\n"],
    ["tail -n 2 n.txt", "b\nc"],
    ["tail -n -2 n.txt", "b\nc"],
    ["tail -n +2 a.txt", "foo\nbar baz qux\n"],
    ["tail -c 4 a.txt", "qux\n"],
    ["tail -c +3 n.txt", "b\nc"],
    ["tail -n 0 a.txt", ""],
    ["wc a.txt", " 3  6 28 a.txt\n"],
    ["wc -l a.txt", "3 a.txt\n"],
    ["wc -c b.txt", "200 b.txt\n"],
    ["wc -lwmc a.txt", " 3  6 28 28 a.txt\n"],
    ["wc -cl a.txt", " 3 28 a.txt\n"],
    ["wc a.txt b.txt", "  3   6  28 a.txt\n  0   1 200 b.txt\n  3   7 228 total\n"],
    ["wc -lw a.txt b.txt", "  3   6 a.txt\n  0   1 b.txt\n  3   7 total\n"],
    ["wc -l a.txt n.txt", " 3 a.txt\n 2 n.txt\n 5 total\n"],
  ];
  for (const [command, stdout] of cases) {
    test(command, async () => {
      assert.deepEqual(await shell.sh(command), { exitCode: 0, stdout, stderr: "" });
    });
  }

  test("wc -m counts characters, -c bytes", async () => {
    await shell.session.writeTextFile({ path: "u.txt", content: "héllo\n" });
    assert.equal((await shell.sh("wc -m u.txt")).stdout, "6 u.txt\n");
    assert.equal((await shell.sh("wc -c u.txt")).stdout, "7 u.txt\n");
  });

  test("a missing file or a directory: the others still print, exit 1", async () => {
    await shell.session.writeTextFile({ path: "d/x", content: "" });
    assert.deepEqual(await shell.sh("head -n 1 nope.txt a.txt"), {
      exitCode: 1,
      stdout: "==> a.txt <==\nhello world\n",
      stderr: "head: cannot open 'nope.txt' for reading: No such file or directory\n",
    });
    assert.deepEqual(await shell.sh("tail d"), {
      exitCode: 1,
      stdout: "",
      stderr: "tail: error reading 'd': Is a directory\n",
    });
    assert.deepEqual(await shell.sh("wc -l nope.txt"), {
      exitCode: 1,
      stdout: "",
      stderr: "wc: nope.txt: No such file or directory\n",
    });
    assert.deepEqual(await shell.sh("head -n x a.txt"), {
      exitCode: 1,
      stdout: "",
      stderr: "head: invalid number of lines: 'x'\n",
    });
  });

  test("what they do not implement is refused with exit 2, saying why", async () => {
    const refused: [string, RegExp][] = [
      ["tail -f a.txt", /^tail: option '-f' is not supported here \(supported: -n -c\)\n$/],
      ["head -q a.txt n.txt", /^head: option '-q' is not supported here/],
      ["wc -L a.txt", /^wc: option '-L' is not supported here \(supported: -l -w -m -c\)\n$/],
      ["wc --lines a.txt", /^wc: option '--lines' is not supported here/],
      ["head", /^head: reading standard input is not supported here \(commands get no input\); name a file\n$/],
      ["tail -n 3", /^tail: reading standard input is not supported here/],
      ["wc -l", /^wc: reading standard input is not supported here/],
      ["wc -", /^wc: reading standard input is not supported here/],
      ["cat", /^cat: reading standard input is not supported here/],
      ["head -n", /^head: option requires an argument -- 'n'\n$/],
    ];
    for (const [command, stderr] of refused) {
      const r = await shell.sh(command);
      assert.equal(r.exitCode, 2, command);
      assert.equal(r.stdout, "", command);
      assert.match(r.stderr, stderr, command);
    }
  });

  test("paths resolve as every command's do: confined to the workspace", async () => {
    for (const command of ["head /etc/passwd", "tail ../x", "wc -l a/../../x"]) {
      const r = await shell.sh(command);
      assert.equal(r.exitCode, 1, command);
      assert.match(r.stderr, /outside the base directory|climbs above the base directory/, command);
    }
  });
});
