// Threat: a model-written command line in the AI SDK sandbox session names a path outside the
// workspace — with `..`, an absolute path, a `cd` that walks out (and so moves every later command
// out), or a symlink a program made — and a built-in (which runs on the host, over the in-memory
// workspace) or the session's file methods hand it a host file's bytes or list a host directory.
// The built-ins never touch the host's file system: every path goes through Workspace.resolve, which
// refuses `..` above the base and absolute paths outside it; the workspace holds no symlinks, and a
// run's returned files are only regular files, their paths resolved the same way.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { createSandboxSession } from "../../src/adapters/ai/index.ts";
import { createSandbox, WorkspaceError, type Sandbox } from "../../src/index.ts";

/** A line of the host's /etc/passwd: output that holds it came from the host. */
const HOST_SECRET = readFileSync("/etc/passwd", "utf8").split("\n")[0]!;

/** Command lines that name a path above the base; `up` climbs from where the session is to the base. */
const escapes = (up: string) => [
  `cd ${up}..`,
  `cd ${up}../..`,
  "cd /",
  "cd /etc",
  "cd /workspace/../etc",
  `cd ${up}a/../../etc`,
  `ls ${up}..`,
  "ls -la /",
  "ls -la /etc",
  `ls -d ${up}../..`,
  `cat ${up}../../etc/passwd`,
  "head /etc/passwd",
  "head -n 1 /workspace/../etc/passwd",
  `tail -n 1 ${up}../etc/passwd`,
  "tail -c 100 /etc/passwd",
  "wc -l /etc/passwd",
  `wc -c ${up}a/../../etc/passwd`,
  `echo x > ${up}../escape.txt`,
  "echo x > /tmp/escape.txt",
];

describe("AI SDK sandbox session: no command reaches a path outside the workspace", () => {
  const engines = ["pyodide", "native"] as const;
  const sandboxes: Partial<Record<(typeof engines)[number], Sandbox>> = {};
  before(async () => {
    for (const engine of engines)
      sandboxes[engine] = await createSandbox({ python: { engine, pool: 1, prewarm: false } });
  });
  after(async () => {
    for (const s of Object.values(sandboxes)) await s.close();
  });
  const open = (engine: (typeof engines)[number] = "pyodide") =>
    createSandboxSession({
      sandbox: sandboxes[engine]!,
      limits: { timeoutMs: 20_000 },
      files: { "a/f.txt": "in a\n" },
    });

  test("from the base and from a subdirectory: refused, nothing from the host, still inside", async () => {
    const box = open();
    for (const start of ["", "a"]) {
      if (start) assert.equal((await box.run({ command: `cd ${start}` })).exitCode, 0);
      for (const command of escapes(start ? "../" : "")) {
        const r = await box.run({ command });
        assert.notEqual(r.exitCode, 0, `${command}: ${r.stdout}`);
        assert.doesNotMatch(r.stdout, /root|passwd|escape/, command);
        assert.ok(!r.stdout.includes(HOST_SECRET), command);
        assert.match(r.stderr, /outside the base directory|climbs above the base directory/, command);
      }
      // Every refused cd left the session where it was, and `cd -` can only go back inside.
      assert.equal((await box.run({ command: "pwd" })).stdout, start ? "/workspace/a\n" : "/workspace\n");
    }
    await box.run({ command: "cd -" });
    assert.equal((await box.run({ command: "pwd" })).stdout, "/workspace\n");
    assert.equal(await box.stat({ path: "/workspace/escape.txt" }), null);
    for (const workingDirectory of ["/etc", "..", "a/../.."]) {
      await assert.rejects(async () => box.run({ command: "pwd", workingDirectory }), WorkspaceError, workingDirectory);
    }
  });

  test("base directory / is an in-memory tree, not the host's root", async () => {
    const box = createSandboxSession({ sandbox: sandboxes.pyodide!, baseDirectory: "/" });
    for (const command of ["cat /etc/passwd", "head /etc/passwd", "wc -l /etc/passwd", "ls /etc", "cd /etc"]) {
      const r = await box.run({ command });
      assert.notEqual(r.exitCode, 0, command);
      assert.ok(!r.stdout.includes(HOST_SECRET), command);
    }
    assert.equal((await box.run({ command: "ls -a /" })).stdout, ".\n..\n");
  });

  for (const engine of engines) {
    test(`a symlink a Python program makes (on ${engine}) never brings a host file into the workspace`, async () => {
      const box = open(engine);
      const r = await box.run({
        command: `python -c "import os; os.symlink('/etc/passwd', 'leak'); os.symlink('/etc', 'etc'); os.symlink('/', 'a/root')"`,
      });
      assert.equal(r.exitCode, 0, r.stderr);
      for (const command of [
        "cat leak",
        "head leak",
        "tail -n 1 leak",
        "wc leak",
        "ls etc",
        "ls -la a/root",
        "cd etc",
      ]) {
        const c = await box.run({ command });
        assert.notEqual(c.exitCode, 0, command);
        assert.ok(!c.stdout.includes(HOST_SECRET), command);
      }
      assert.equal((await box.run({ command: "ls -A" })).stdout, "a\n");
      assert.equal((await box.run({ command: "ls a" })).stdout, "f.txt\n");
    });
  }
});
