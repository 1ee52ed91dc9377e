// `ls` in a sandbox session: GNU's one-name-a-line output to a pipe, the long format with what the
// workspace knows, and a refusal (exit 2) for every flag it does not implement.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { humanSize } from "../../../src/adapters/ai/listing.ts";
import { openShell, type Shell } from "./session-helper.ts";

const STAMP = String.raw`[A-Z][a-z]{2} [ \d]\d \d\d:\d\d`;

describe("ls", () => {
  let shell: Shell;
  before(async () => {
    shell = await openShell({ files: { "a.txt": "x".repeat(2000), ".hidden": "h", "src/main.py": "print(1)\n" } });
  });
  after(() => shell.sandbox.close());

  test("names, one a line; -a and -A show hidden entries; -r reverses; -d lists the directory itself", async () => {
    assert.equal((await shell.sh("ls")).stdout, "a.txt\nsrc\n");
    assert.equal((await shell.sh("ls -1")).stdout, "a.txt\nsrc\n");
    assert.equal((await shell.sh("ls -A")).stdout, ".hidden\na.txt\nsrc\n");
    assert.equal((await shell.sh("ls -a")).stdout, ".\n..\n.hidden\na.txt\nsrc\n");
    assert.equal((await shell.sh("ls -r")).stdout, "src\na.txt\n");
    assert.equal((await shell.sh("ls -S")).stdout, "a.txt\nsrc\n");
    assert.equal((await shell.sh("ls -d src")).stdout, "src\n");
    assert.equal((await shell.sh("ls src a.txt")).stdout, "a.txt\n\nsrc:\nmain.py\n");
  });

  test("-la: the long format, with . and ..", async () => {
    const r = await shell.sh("ls -la");
    assert.equal(r.exitCode, 0, r.stderr);
    const lines = r.stdout.split("\n");
    assert.equal(lines[0], "total 3"); // 2000 bytes → 2 KiB blocks, the 1-byte file → 1
    const expected = [
      `drwxr-xr-x 2 sandbox sandbox    0 ${STAMP} \\.`,
      `drwxr-xr-x 2 sandbox sandbox    0 ${STAMP} \\.\\.`,
      `-rw-r--r-- 1 sandbox sandbox    1 ${STAMP} \\.hidden`,
      `-rw-r--r-- 1 sandbox sandbox 2000 ${STAMP} a\\.txt`,
      `drwxr-xr-x 2 sandbox sandbox    0 ${STAMP} src`,
    ];
    assert.equal(lines.length, expected.length + 2); // total, the entries, the final newline
    expected.forEach((pattern, i) => assert.match(lines[i + 1]!, new RegExp(`^${pattern}$`)));
    assert.match(
      (await shell.sh("ls -l a.txt")).stdout,
      new RegExp(`^-rw-r--r-- 1 sandbox sandbox 2000 ${STAMP} a\\.txt\\n$`),
    );
    assert.match((await shell.sh("ls -lh")).stdout, /^total 2\.0K\n-rw-r--r-- 1 sandbox sandbox 2\.0K /);
  });

  test("-t: the newest first", async () => {
    const before = Date.now();
    while (Date.now() === before) await new Promise((r) => setTimeout(r, 1));
    await shell.session.writeTextFile({ path: "newer.txt", content: "n" });
    assert.equal((await shell.sh("ls -t")).stdout.split("\n")[0], "newer.txt");
    assert.equal((await shell.sh("ls -tr")).stdout.trim().split("\n").at(-1), "newer.txt");
    await shell.session.deleteFile({ path: "newer.txt" });
  });

  test("-h sizes as GNU prints them: powers of 1024, rounded up, one decimal below 10", () => {
    const cases: [number, string][] = [
      [0, "0"],
      [1023, "1023"],
      [1024, "1.0K"],
      [1025, "1.1K"],
      [1536, "1.5K"],
      [10 * 1024 - 1, "10K"],
      [12_345, "13K"],
      [1024 * 1024, "1.0M"],
      [5 * 1024 ** 3, "5.0G"],
    ];
    for (const [bytes, shown] of cases) assert.equal(humanSize(bytes), shown, String(bytes));
  });

  test("a missing path exits 2 as GNU ls does; an unsupported flag exits 2 naming what is supported", async () => {
    assert.deepEqual(await shell.sh("ls nope"), {
      exitCode: 2,
      stdout: "",
      stderr: "ls: cannot access 'nope': No such file or directory\n",
    });
    for (const flag of ["-R", "-F", "--color=auto", "-la --full-time"]) {
      const r = await shell.sh(`ls ${flag}`);
      assert.equal(r.exitCode, 2, flag);
      assert.match(
        r.stderr,
        /^ls: option '.*' is not supported here \(supported: -1 -a -A -d -l -h -r -t -S\)\n$/,
        flag,
      );
    }
    const outside = await shell.sh("ls -la /etc");
    assert.equal(outside.exitCode, 2);
    assert.match(outside.stderr, /^ls: \/etc: the path is outside the base directory \/workspace\n$/);
  });
});
