// wasmcell/ai's Experimental_SandboxSession over real engines: the AI SDK hands it to tools as
// `experimental_sandbox`, commands run as wasmcell runs over a persistent workspace, and nothing ever
// starts a host process.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateText, isStepCount, tool, type Experimental_SandboxSession } from "ai";
import { z } from "zod";
import { createSandboxSession } from "../../../src/adapters/ai/index.ts";
import { createSandbox, WorkspaceError, type Sandbox } from "../../../src/index.ts";
import { scriptedModel } from "./scripted-model.ts";

/** The tools an application would give a model: each works only through `experimental_sandbox`. */
const sandboxTools = {
  bash: tool({
    description: "Run a command",
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }, { experimental_sandbox: box }) => {
      const r = await box!.run({ command });
      return `exit ${r.exitCode}\n${r.stdout}${r.stderr}`;
    },
  }),
  read_file: tool({
    description: "Read a file",
    inputSchema: z.object({ path: z.string() }),
    execute: async ({ path }, { experimental_sandbox: box }) => (await box!.readTextFile({ path })) ?? "(no file)",
  }),
};

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("Experimental_SandboxSession (createSandboxSession)", () => {
  let sandbox: Sandbox;
  let box: Experimental_SandboxSession;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  });
  after(async () => {
    await sandbox.close();
  });
  const fresh = () => (box = createSandboxSession({ sandbox, limits: { timeoutMs: 20_000 } }));

  test("generateText: a model writes data.csv, runs python -c over it, reads the result back", async () => {
    fresh();
    const model = scriptedModel([
      {
        call: "bash",
        input: { command: `python3 -c "open('data.csv', 'w').write('city,temp\\nOslo,4\\nRome,18\\nLima,20\\n')"` },
      },
      {
        call: "bash",
        input: {
          command: `python -c 'import csv\nrows = list(csv.DictReader(open("data.csv")))\nmean = sum(int(r["temp"]) for r in rows) / len(rows)\nopen("result.txt", "w").write(f"mean={mean}")\nprint(len(rows), "rows")'`,
        },
      },
      { call: "read_file", input: { path: "result.txt" } },
      { say: (results) => `The file says: ${results.map((r) => r.text).join("")}` },
    ]);
    const result = await generateText({
      model,
      tools: sandboxTools,
      experimental_sandbox: box,
      stopWhen: isStepCount(5),
      prompt: "mean temperature",
    });
    assert.equal(model.seen[1]![0]!.text, "exit 0\n");
    assert.equal(model.seen[2]![0]!.text, "exit 0\n3 rows\n");
    assert.equal(result.text, "The file says: mean=14.0");
    assert.equal(await box.readTextFile({ path: "/workspace/data.csv", startLine: 2, endLine: 2 }), "Oslo,4\n");
  });

  test("node and tsx run files and inline code over the workspace", async () => {
    fresh();
    await box.writeTextFile({
      path: "src/sum.ts",
      content:
        "const n: number[] = JSON.parse(fs.readFileSync('in.json', 'utf8'));\nconsole.log(n.reduce((a, b) => a + b, 0));",
    });
    await box.writeTextFile({ path: "src/in.json", content: "[1, 2, 3]" });
    assert.deepEqual(await box.run({ command: "tsx sum.ts", workingDirectory: "src" }), {
      exitCode: 0,
      stdout: "6\n",
      stderr: "",
    });
    const r = await box.run({ command: `node -e "fs.writeFileSync('out/x.txt', 'hi'); console.log('ok')"` });
    assert.deepEqual(r, { exitCode: 0, stdout: "ok\n", stderr: "" });
    assert.deepEqual(await box.listDirectory({ path: "out" }), [{ name: "x.txt", type: "file" }]);
  });

  test("guest errors exit 1 with the error on stderr, relabelled to the user's file", async () => {
    fresh();
    await box.writeTextFile({ path: "bad.py", content: "x = 1\nprint('before')\n1 / 0\n" });
    const py = await box.run({ command: "python bad.py" });
    assert.equal(py.exitCode, 1);
    assert.equal(py.stdout, "before\n");
    assert.match(py.stderr, /File "\/workspace\/bad\.py", line 3/);
    assert.match(py.stderr, /ZeroDivisionError: division by zero\n$/);
    const js = await box.run({ command: "node -e 'null.x'" });
    assert.equal(js.exitCode, 1);
    assert.match(js.stderr, /^TypeError: /);
    const exit = await box.run({ command: "python -c 'import sys; sys.exit(3)'" });
    assert.equal(exit.exitCode, 3);
  });

  test("python gets sys.argv and os.environ; node gets process.argv and process.env", async () => {
    fresh();
    await box.writeTextFile({
      path: "args.py",
      content: "import os, sys\nprint(sys.argv, os.environ['GREETING'])\nraise ValueError('line 3')\n",
    });
    const r = await box.run({ command: "python3 args.py 'a b' c", env: { GREETING: "hi" } });
    assert.equal(r.stdout, "['args.py', 'a b', 'c'] hi\n");
    assert.match(r.stderr, /File "\/workspace\/args\.py", line 3/); // the argv line is not counted
    await box.writeTextFile({ path: "x.js", content: "console.log(process.argv, process.env.GREETING)\nnull.x" });
    const n = await box.run({ command: "node x.js arg", env: { GREETING: "hi" } });
    assert.equal(n.stdout, "[ 'node', '/workspace/x.js', 'arg' ] hi\n");
    // The process object shares the first line: the error is still on line 2.
    assert.match(n.stderr, /\/workspace\/x\.js:2/);
  });

  test("shell built-ins, redirections, and what answers like a shell", async () => {
    fresh();
    assert.equal((await box.run({ command: "mkdir -p a/b" })).exitCode, 0);
    assert.deepEqual(await box.run({ command: "echo 'hello world' > a/b/greet.txt" }), {
      exitCode: 0,
      stdout: "",
      stderr: "",
    });
    assert.equal((await box.run({ command: "cat a/b/greet.txt" })).stdout, "hello world\n");
    assert.deepEqual(await box.run({ command: "echo x > nodir/f.txt" }), {
      exitCode: 1,
      stdout: "",
      stderr: "bash: nodir/f.txt: No such file or directory\n",
    });
    assert.equal((await box.run({ command: "ls a", workingDirectory: "/workspace" })).stdout, "b\n");
    assert.equal((await box.run({ command: "pwd", workingDirectory: "a/b" })).stdout, "/workspace/a/b\n");
    const both = await box.run({
      command: "python -c 'import sys; print(1); print(2, file=sys.stderr)' > log.txt 2>&1",
    });
    assert.deepEqual(both, { exitCode: 0, stdout: "", stderr: "" });
    assert.equal(await box.readTextFile({ path: "log.txt" }), "1\n2\n");
    assert.equal((await box.run({ command: "rm -r a" })).exitCode, 0);
    assert.equal(await box.stat({ path: "a" }), null);
    assert.deepEqual(await box.run({ command: "gcc x.c" }), {
      exitCode: 127,
      stdout: "",
      stderr: "gcc: command not found\n",
    });
    // Never a meaning bash would not give: a descriptor other than 1 and 2, arithmetic expansion.
    const fd3 = await box.run({ command: "echo hi 3>f" });
    assert.equal(fd3.exitCode, 2);
    assert.match(fd3.stderr, /redirecting descriptor 3 .* is not supported/);
    assert.equal(await box.stat({ path: "f" }), null);
    const arithmetic = await box.run({ command: 'echo "$[1+2]"' });
    assert.deepEqual([arithmetic.exitCode, arithmetic.stdout], [2, ""]);
    assert.match(arithmetic.stderr, /arithmetic expansion/);
    const pipe = await box.run({ command: "cat log.txt | wc -l" });
    assert.equal(pipe.exitCode, 2);
    assert.match(pipe.stderr, /a pipe \('\|'\) is not supported/);
    assert.match((await box.run({ command: "cat /etc/passwd" })).stderr, /outside the base directory/);
  });

  test("a deadline exits 124, like timeout(1)", async () => {
    box = createSandboxSession({ sandbox, limits: { timeoutMs: 200 } });
    const r = await box.run({ command: "node -e 'while (true) {}'" });
    assert.equal(r.exitCode, 124);
    assert.match(r.stderr, /^timeout: the run did not finish within 200 ms/);
  });

  test("spawn streams output as it comes; kill() ends the run with 137", async () => {
    fresh();
    const proc = await box.spawn({ command: "node -e 'console.log(\"first\"); while (true) {}'" });
    let exited = false;
    const waited = proc.wait().then((r) => ((exited = true), r));
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    assert.equal(new TextDecoder().decode(first.value), "first\n");
    assert.equal(exited, false, "the chunk arrived while the program was still running");
    await proc.kill();
    assert.deepEqual(await waited, { exitCode: 137 });
    reader.releaseLock();
    assert.equal(await text(proc.stderr), "");
  });

  test("abortSignal: the run ends and run()/wait() reject with the abort reason", async () => {
    fresh();
    const controller = new AbortController();
    const proc = await box.spawn({
      command: "node -e 'console.log(1); while (true) {}'",
      abortSignal: controller.signal,
    });
    await proc.stdout.getReader().read();
    const reason = new Error("user stopped");
    controller.abort(reason);
    await assert.rejects(
      async () => proc.wait(),
      (e: unknown) => e === reason,
    );
    await assert.rejects(
      async () => box.run({ command: "echo x", abortSignal: AbortSignal.abort(reason) }),
      (e: unknown) => e === reason,
    );
    await assert.rejects(async () => box.spawn({ command: "cat", stdin: true }), /standard input is not supported/);
  });

  test("the file API is confined to the base directory", async () => {
    fresh();
    await box.writeBinaryFile({ path: "bin/x.bin", content: new Uint8Array([0, 1, 255]) });
    assert.deepEqual(await box.readBinaryFile({ path: "bin/x.bin" }), new Uint8Array([0, 1, 255]));
    assert.deepEqual(await box.stat({ path: "bin" }), { type: "directory", size: 0 });
    assert.equal(await box.readTextFile({ path: "missing.txt" }), null);
    await box.writeFile({ path: "s.txt", content: new Blob(["streamed"]).stream() });
    assert.equal(await text((await box.readFile({ path: "s.txt" }))!), "streamed");
    assert.equal(await box.deleteFile({ path: "s.txt" }), true);
    assert.equal(await box.deleteFile({ path: "s.txt" }), false);
    await assert.rejects(async () => box.deleteFile({ path: "bin" }), WorkspaceError);
    for (const path of ["/etc/passwd", "../x", "bin/../../x"]) {
      await assert.rejects(async () => box.readTextFile({ path }), WorkspaceError, path);
      await assert.rejects(async () => box.writeTextFile({ path, content: "x" }), WorkspaceError, path);
    }
    await assert.rejects(async () => box.run({ command: "ls", workingDirectory: "/tmp" }), WorkspaceError);
    assert.match(box.description, /\/workspace/);
  });
});
