// The working directory a program sees is the one `pwd` prints, on every engine a session's commands
// run on (Python on Pyodide and native, JavaScript and TypeScript on QuickJS), before and after a
// `cd`; and an absolute path built from it reaches the workspace's files.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createSandboxSession } from "../../../src/adapters/ai/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";

const PROGRAMS = [
  `python -c 'import os; print(os.getcwd())'`,
  `python3 -c 'import pathlib; print(pathlib.Path.cwd())'`,
  `node -e 'console.log(process.cwd())'`,
  `tsx -e 'const here: string = process.cwd(); console.log(here)'`,
];

for (const engine of ["pyodide", "native"] as const) {
  describe(`the programs' working directory is pwd's (Python on ${engine})`, () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await createSandbox({ python: { engine, pool: 1, prewarm: false } });
    });
    after(() => sandbox.close());
    const open = (baseDirectory?: string) =>
      createSandboxSession({
        sandbox,
        limits: { timeoutMs: 20_000 },
        files: { "data/in.txt": "forty-two\n" },
        ...(baseDirectory ? { baseDirectory } : {}),
      });

    test("at the base directory and after cd, every program prints what pwd prints", async () => {
      const box = open();
      for (const dir of [undefined, "data"]) {
        if (dir) assert.equal((await box.run({ command: `cd ${dir}` })).exitCode, 0);
        const pwd = (await box.run({ command: "pwd" })).stdout;
        assert.equal(pwd, dir ? "/workspace/data\n" : "/workspace\n");
        for (const command of PROGRAMS) {
          const r = await box.run({ command });
          assert.deepEqual([r.exitCode, r.stdout, r.stderr], [0, pwd, ""], command);
        }
      }
    });

    test("Python: absolute paths under the working directory reach the files, and what it writes comes back", async () => {
      const box = open();
      await box.run({ command: "cd data" });
      const code = [
        "import os, pathlib",
        "p = os.path.abspath('in.txt')",
        "print(p, open(p).read().strip(), pathlib.Path('in.txt').resolve().read_text().strip())",
        "print(os.path.exists('/workspace/data/in.txt'), sorted(os.listdir('/workspace/data')))",
        "os.makedirs('/workspace/data/out/deep', exist_ok=True)",
        "pathlib.Path('/workspace/data/out/deep/r.txt').write_text('written')",
      ].join("\n");
      const r = await box.run({ command: `python -c "${code}"` });
      assert.equal(r.stderr, "");
      assert.equal(r.stdout, "/workspace/data/in.txt forty-two forty-two\nTrue ['in.txt']\n");
      assert.equal(await box.readTextFile({ path: "data/out/deep/r.txt" }), "written");
      // (A run that changes directory and writes, in one program, loses the native tier's files: its
      // driver collects them from the directory the program ended in. So chdir gets its own command.)
      const moved = await box.run({ command: `python -c "import os; os.chdir('out/deep'); print(os.getcwd())"` });
      assert.equal(moved.stdout, "/workspace/data/out/deep\n");
      // A traceback still names the user's line: the prelude takes exactly one.
      const bad = await box.run({ command: `python -c "x = 1\nraise ValueError(os)"` });
      assert.match(bad.stderr, /File "<string>", line 2/);
    });

    test("a script with a #! line runs (its process object takes that line's place)", async () => {
      const box = open();
      await box.writeTextFile({
        path: "tool.js",
        content: "#!/usr/bin/env node\nconsole.log(process.cwd())\nnull.x\n",
      });
      const r = await box.run({ command: "node tool.js" });
      assert.equal(r.stdout, "/workspace\n");
      assert.match(r.stderr, /\/workspace\/tool\.js:3/);
    });

    test("a base directory that exists in the guest is not mapped over it: the guest's files stay reachable", async () => {
      const box = open("/dev");
      const r = await box.run({
        command: `python -c 'import os; print(os.path.exists("/dev/null"), os.getcwd() != "/dev")'`,
      });
      assert.deepEqual([r.exitCode, r.stdout, r.stderr], [0, "True True\n", ""]);
    });
  });
}
