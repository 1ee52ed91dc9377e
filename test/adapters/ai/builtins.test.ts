// `cd` in a sandbox session: a bare `cd DIR` moves the session's next commands there (pwd, the
// built-ins, the programs), fails like bash when DIR is not a directory, and with `cd: "command"`
// affects only its own command line, as the AI SDK's interface words it.
import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { createSandboxSession } from "../../../src/adapters/ai/index.ts";
import { InvalidOptionError } from "../../../src/index.ts";
import { openShell, type Shell } from "./session-helper.ts";

describe("cd", () => {
  const shells: Shell[] = [];
  after(async () => {
    for (const s of shells) await s.sandbox.close();
  });
  const open = async (options: Parameters<typeof openShell>[0] = {}) => {
    const shell = await openShell({ files: { "a/b/f.txt": "in b\n", "a/g.txt": "in a\n" }, ...options });
    shells.push(shell);
    return shell;
  };

  test("cd DIR: pwd, ls, cat and redirections of the next commands start there", async () => {
    const { sh, session } = await open();
    assert.deepEqual(await sh("cd a/b"), { exitCode: 0, stdout: "", stderr: "" });
    assert.equal((await sh("pwd")).stdout, "/workspace/a/b\n");
    assert.equal((await sh("ls")).stdout, "f.txt\n");
    assert.equal((await sh("cat f.txt ../g.txt")).stdout, "in b\nin a\n");
    await sh("echo made > here.txt");
    assert.equal(await session.readTextFile({ path: "a/b/here.txt" }), "made\n");
    // The file methods and workingDirectory still resolve against the base directory.
    assert.equal(await session.readTextFile({ path: "a/g.txt" }), "in a\n");
    assert.equal((await sh("pwd", "a")).stdout, "/workspace/a\n");
    assert.equal((await sh("pwd")).stdout, "/workspace/a/b\n");
    assert.deepEqual(await sh("cd .."), { exitCode: 0, stdout: "", stderr: "" });
    assert.equal((await sh("pwd")).stdout, "/workspace/a\n");
    assert.deepEqual(await sh("cd -"), { exitCode: 0, stdout: "/workspace/a/b\n", stderr: "" });
    assert.equal((await sh("cd")).exitCode, 0);
    assert.equal((await sh("pwd")).stdout, "/workspace\n");
    assert.equal((await sh("cd /workspace/a")).exitCode, 0);
    assert.equal((await sh("pwd")).stdout, "/workspace/a\n");
  });

  test("a missing directory or a file fails as bash does: exit 1, the directory unchanged", async () => {
    const { sh } = await open();
    assert.deepEqual(await sh("cd nope"), {
      exitCode: 1,
      stdout: "",
      stderr: "bash: cd: nope: No such file or directory\n",
    });
    assert.deepEqual(await sh("cd a/g.txt"), {
      exitCode: 1,
      stdout: "",
      stderr: "bash: cd: a/g.txt: Not a directory\n",
    });
    assert.deepEqual(await sh("cd a b"), { exitCode: 1, stdout: "", stderr: "bash: cd: too many arguments\n" });
    assert.deepEqual(await sh("cd -"), { exitCode: 1, stdout: "", stderr: "bash: cd: OLDPWD not set\n" });
    assert.equal((await sh("cd -P a")).exitCode, 2);
    assert.equal((await sh("pwd")).stdout, "/workspace\n");
  });

  test("a directory removed under the session: the next command is back in the base directory and says so", async () => {
    const { sh } = await open();
    await sh("cd a/b");
    assert.equal((await sh("rm -r /workspace/a")).exitCode, 0);
    assert.deepEqual(await sh("pwd"), {
      exitCode: 0,
      stdout: "/workspace\n",
      stderr: "wasmcell: the working directory /workspace/a/b no longer exists; back in /workspace\n",
    });
    assert.deepEqual(await sh("pwd"), { exitCode: 0, stdout: "/workspace\n", stderr: "" });
  });

  test('cd: "command": a cd affects only its own command line', async () => {
    const { sh, session } = await open({ cd: "command" });
    assert.equal((await sh("cd a")).exitCode, 0);
    assert.equal((await sh("pwd")).stdout, "/workspace\n");
    assert.equal((await sh("cd nope")).exitCode, 1);
    assert.doesNotMatch(session.description, /cd changes the directory/);
    const { sandbox } = shells[0]!;
    assert.throws(() => createSandboxSession({ sandbox, cd: "shell" as "session" }), InvalidOptionError);
  });
});
