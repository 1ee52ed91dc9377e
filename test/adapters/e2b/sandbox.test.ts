// wasmcell/e2b end to end on the real engines: E2B's README example with only the import changed,
// statefulness per context in Python, JavaScript and TypeScript, failures as Execution.error, the
// callbacks, the files, contexts, and what has no meaning here throwing NotSupportedError.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Sandbox, type OutputMessage, type Result, type ExecutionError } from "../../../src/adapters/e2b/index.ts";
import { ClosedError, InvalidOptionError, NotSupportedError, WorkspaceError } from "../../../src/core/errors.ts";
import { createSandbox, type Sandbox as WasmcellSandbox } from "../../../src/index.ts";

const notSupported = (feature: RegExp) => (e: unknown) =>
  e instanceof NotSupportedError && e.code === "NOT_SUPPORTED" && feature.test(e.feature);

describe("E2B's README example, with only the import changed", () => {
  test("x = 1, then x+=1; x has the text 2", async () => {
    const sbx = await Sandbox.create();
    try {
      await sbx.runCode("x = 1");

      const execution = await sbx.runCode("x+=1; x");
      assert.equal(execution.text, "2");
      assert.equal(sbx.pythonEngine, "native", "Python on the native tier where it is available (pandas, matplotlib)");
    } finally {
      await sbx.kill();
    }
  });
});

describe("wasmcell/e2b over one wasmcell sandbox", () => {
  let wasmcell: WasmcellSandbox;
  let sbx: Sandbox;
  before(async () => {
    wasmcell = await createSandbox();
    sbx = await Sandbox.create({ sandbox: wasmcell, limits: { timeoutMs: 20_000 } });
  });
  after(async () => {
    await sbx.kill();
    await wasmcell.close();
  });

  test("JavaScript and TypeScript contexts keep their state", async () => {
    await sbx.runCode("let n = 1", { language: "js" });
    assert.equal((await sbx.runCode("n += 1; n", { language: "javascript" })).text, "2");
    await sbx.runCode("const greet = (who: string): string => `hi ${who}`", { language: "ts" });
    assert.equal((await sbx.runCode("greet('ts')", { language: "typescript" })).text, "hi ts");
    // The languages are separate interpreters.
    const e = await sbx.runCode("typeof n", { language: "ts" });
    assert.equal(e.text, "undefined");
  });

  test("a Python exception is Execution.error (name, value, traceback) and onError gets it", async () => {
    const errors: ExecutionError[] = [];
    const e = await sbx.runCode("1/0", { onError: (err) => errors.push(err) });
    assert.equal(e.error?.name, "ZeroDivisionError");
    assert.equal(e.error?.value, "division by zero");
    assert.match(e.error?.traceback ?? "", /Traceback[\s\S]*line 1/);
    assert.equal(e.error?.kind, "runtime");
    assert.deepEqual(errors, [e.error]);
    assert.deepEqual(e.results, []);
    assert.equal(e.text, undefined);
  });

  test("a JavaScript exception and a syntax error are Execution.error too", async () => {
    const thrown = await sbx.runCode("throw new TypeError('bad')", { language: "js" });
    assert.equal(thrown.error?.name, "TypeError");
    assert.equal(thrown.error?.value, "bad");
    const syntax = await sbx.runCode("def (:");
    assert.equal(syntax.error?.name, "SyntaxError");
    assert.equal(syntax.error?.kind, "syntax");
  });

  test("a run past timeoutMs is an error of kind timeout naming the limit; the context carries on", async () => {
    await sbx.runCode("kept = 'yes'");
    const e = await sbx.runCode("while True: pass", { timeoutMs: 300 });
    assert.equal(e.error?.kind, "timeout");
    assert.equal(e.error?.limit, "timeoutMs");
    assert.equal((await sbx.runCode("kept")).text, "yes");
  });

  test("onStdout and onStderr get each chunk as an OutputMessage; logs keep them", async () => {
    const out: OutputMessage[] = [];
    const err: OutputMessage[] = [];
    const e = await sbx.runCode('import sys\nprint("hello")\nprint("This is an error message", file=sys.stderr)', {
      onStdout: (m) => out.push(m),
      onStderr: (m) => err.push(m),
    });
    assert.deepEqual(e.logs, { stdout: ["hello\n"], stderr: ["This is an error message\n"] });
    assert.deepEqual(
      out.map((m) => [m.line, m.error, String(m)]),
      [["hello\n", false, "hello\n"]],
    );
    assert.deepEqual(
      err.map((m) => [m.line, m.error]),
      [["This is an error message\n", true]],
    );
    assert.ok(out[0]!.timestamp > 0);
  });

  test("onResult gets the main result", async () => {
    const results: Result[] = [];
    const e = await sbx.runCode("y = 1; y", { onResult: (r) => results.push(r) });
    assert.equal(results.length, 1);
    assert.equal(e.results[0]?.text, "1");
    assert.equal(results[0]?.isMainResult, true);
  });

  test("a callback that throws, or whose promise rejects, rejects runCode after the run", async () => {
    await assert.rejects(
      sbx.runCode("print('x')", {
        onStdout: () => {
          throw new Error("callback broke");
        },
      }),
      /callback broke/,
    );
    await assert.rejects(
      sbx.runCode("print('x')", { onStdout: () => Promise.reject(new Error("async callback broke")) }),
      /async callback broke/,
    );
    // The context is fine afterwards.
    assert.equal((await sbx.runCode("40 + 2")).text, "42");
  });

  test("executionCount counts the context's runs", async () => {
    const ctx = await sbx.createCodeContext();
    assert.equal((await sbx.runCode("1", { context: ctx })).executionCount, 1);
    assert.equal((await sbx.runCode("2", { context: ctx })).executionCount, 2);
    await sbx.removeCodeContext(ctx);
  });

  test("files round-trip: written by the host, read by the code; written by the code, read by the host", async () => {
    await sbx.files.write("/home/user/data.csv", "a,b\n1,2\n3,4\n");
    const e = await sbx.runCode(
      "import csv\nrows = list(csv.DictReader(open('data.csv')))\nsum(int(r['b']) for r in rows)",
    );
    assert.equal(e.text, "6");
    await sbx.runCode(
      "open('out/result.txt', 'w').write('done') if __import__('os').makedirs('out', exist_ok=True) is None else 0",
    );
    assert.equal(await sbx.files.read("/home/user/out/result.txt"), "done");
    assert.equal(await sbx.files.read("out/result.txt"), "done");
    // JavaScript contexts see the same files.
    const js = await sbx.runCode("fs.readFileSync('data.csv', 'utf8').split('\\n')[0]", { language: "js" });
    assert.equal(js.text, "a,b");
    const listed = await sbx.files.list("/home/user");
    assert.deepEqual(
      listed.filter((x) => ["data.csv", "out"].includes(x.name)).map((x) => [x.name, x.type, x.path]),
      [
        ["data.csv", "file", "/home/user/data.csv"],
        ["out", "dir", "/home/user/out"],
      ],
    );
    const deep = await sbx.files.list("/home/user", { depth: 2 });
    assert.ok(deep.some((x) => x.path === "/home/user/out/result.txt" && x.size === 4));
  });

  test("files: bytes, Blob and stream formats; write of several; exists, rename, remove, makeDir", async () => {
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 255]);
    const infos = await sbx.files.write([
      { path: "bin/a.bin", data: png },
      { path: "bin/b.txt", data: new Blob(["blob text"]) },
      { path: "bin/c.txt", data: new Blob(["streamed"]).stream() },
    ]);
    assert.deepEqual(
      infos.map((i) => i.path),
      ["/home/user/bin/a.bin", "/home/user/bin/b.txt", "/home/user/bin/c.txt"],
    );
    assert.deepEqual(await sbx.files.read("bin/a.bin", { format: "bytes" }), png);
    assert.equal(await (await sbx.files.read("bin/b.txt", { format: "blob" })).text(), "blob text");
    assert.equal(await new Response(await sbx.files.read("bin/c.txt", { format: "stream" })).text(), "streamed");
    const size = await sbx.runCode("len(open('bin/a.bin', 'rb').read())");
    assert.equal(size.text, "6");
    assert.equal(await sbx.files.exists("bin/a.bin"), true);
    await sbx.files.rename("bin/a.bin", "bin/z.bin");
    assert.equal(await sbx.files.exists("bin/a.bin"), false);
    assert.equal((await sbx.files.getInfo("bin/z.bin")).size, 6);
    assert.equal(await sbx.files.makeDir("empty/dir"), true);
    assert.equal(await sbx.files.makeDir("empty/dir"), false);
    await sbx.files.remove("bin");
    assert.equal(await sbx.files.exists("bin/z.bin"), false);
    await assert.rejects(sbx.files.read("bin/z.bin"), WorkspaceError);
  });

  test("files outside /home/user, and over the caps, are refused", async () => {
    await assert.rejects(sbx.files.write("/etc/passwd", "x"), /outside the base directory \/home\/user/);
    await assert.rejects(sbx.files.write("../escape.txt", "x"), /climbs above/);
    await assert.rejects(sbx.files.read("/proc/self/environ"), WorkspaceError);
    const small = await Sandbox.create({ sandbox: wasmcell, limits: { maxFileBytes: 16 } });
    try {
      await assert.rejects(small.files.write("big.txt", "x".repeat(17)), /over its 16-byte cap/);
      await assert.rejects(
        small.files.write("big.txt", new Blob(["x".repeat(17)]).stream()),
        /over the workspace's 16-byte cap/,
      );
    } finally {
      await small.kill();
    }
  });

  test("a workspace of more files than a run may return (maxFiles) still runs: unchanged files do not come back", async () => {
    const many = await Sandbox.create({ sandbox: wasmcell });
    try {
      await many.files.write(Array.from({ length: 40 }, (_, i) => ({ path: `f${i}.txt`, data: `n${i}` })));
      const py = await many.runCode("import os; len(os.listdir('.'))");
      assert.equal(py.error, undefined, py.error?.value);
      assert.equal(py.text, "40");
      await many.runCode("open('f1.txt', 'w').write('changed by python')");
      await many.runCode("fs.writeFileSync('f2.txt', 'changed by js')", { language: "js" });
      assert.equal(await many.files.read("f1.txt"), "changed by python");
      assert.equal((await many.runCode("open('f2.txt').read()")).text, "changed by js");
    } finally {
      await many.kill();
    }
  });

  test("files a run writes past the workspace's caps are not kept, and stderr says so", async () => {
    const capped = await Sandbox.create({ sandbox: wasmcell, maxWorkspaceEntries: 3 });
    try {
      const lines: string[] = [];
      const e = await capped.runCode("for i in range(5): open(f'w{i}.txt', 'w').write('x')\n'ran'", {
        onStderr: (m) => lines.push(m.line),
      });
      assert.equal(e.text, "ran");
      assert.match(e.logs.stderr.join(""), /not kept in the sandbox's files: .*more than 3 files and directories/);
      assert.equal(lines.length, 1);
      assert.deepEqual(await capped.files.list("/home/user"), []);
    } finally {
      await capped.kill();
    }
  });

  test("contexts: created, listed, restarted, removed", async () => {
    const listed = await sbx.listCodeContexts();
    assert.ok(listed.some((c) => c.language === "python"));
    assert.ok(listed.some((c) => c.language === "javascript"));
    const ctx = await sbx.createCodeContext({ language: "python", cwd: "/home/user" });
    assert.equal(ctx.cwd, "/home/user");
    assert.equal(ctx.language, "python");
    assert.equal((await sbx.listCodeContexts()).at(-1)?.id, ctx.id);
    await sbx.runCode("z = 1", { context: ctx });
    await sbx.restartCodeContext(ctx.id);
    const gone = await sbx.runCode("z", { context: ctx });
    assert.equal(gone.error?.name, "NameError");
    assert.equal(gone.error?.value, "name 'z' is not defined");
    await sbx.removeCodeContext(ctx.id);
    assert.ok(!(await sbx.listCodeContexts()).some((c) => c.id === ctx.id));
    await assert.rejects(sbx.runCode("1", { context: ctx }), InvalidOptionError);
  });

  test("a context and a language together are refused, as E2B refuses them", async () => {
    const ctx = await sbx.createCodeContext();
    await assert.rejects(sbx.runCode("1", { context: ctx, language: "python" }), /not both/);
    await sbx.removeCodeContext(ctx);
  });

  test("what has no meaning here throws NotSupportedError, saying so", async () => {
    await assert.rejects(Sandbox.create("code-interpreter-v1"), notSupported(/template/));
    await assert.rejects(Sandbox.create({ allowInternetAccess: true }), notSupported(/allowInternetAccess/));
    await assert.rejects(Sandbox.create({ envs: { A: "1" } }), notSupported(/envs/));
    await assert.rejects(Sandbox.create({ autoPause: true } as never), notSupported(/autoPause/));
    await assert.rejects(Sandbox.create({ templat: "x" } as never), InvalidOptionError);
    await assert.rejects(Sandbox.connect("sbx-id"), notSupported(/connect/));
    await assert.rejects(Sandbox.list(), notSupported(/list/));
    await assert.rejects(sbx.commands.run("ls"), notSupported(/commands/));
    await assert.rejects(sbx.pty.create(), notSupported(/pty/));
    assert.throws(() => sbx.getHost(3000), notSupported(/getHost/));
    await assert.rejects(sbx.pause(), notSupported(/pause/));
    await assert.rejects(sbx.files.watchDir(), notSupported(/watchDir/));
    await assert.rejects(sbx.runCode("pwd", { language: "bash" }), notSupported(/language "bash"/));
    await assert.rejects(sbx.runCode("1", { language: "r" }), notSupported(/language "r"/));
    await assert.rejects(sbx.runCode("1", { language: "cobol" }), InvalidOptionError);
    await assert.rejects(sbx.runCode("1", { envs: { FOO: "bar" } }), notSupported(/envs/));
    await assert.rejects(sbx.createCodeContext({ cwd: "/root" }), notSupported(/cwd/));
    await assert.rejects(sbx.runCode("1", { timeoutMs: 0 }), /deadline/);
    await assert.rejects(sbx.runCode("1", { bogus: 1 } as never), InvalidOptionError);
    // E2B's connection options are accepted and mean nothing here.
    const plain = await Sandbox.create({
      sandbox: wasmcell,
      apiKey: "e2b_x",
      requestTimeoutMs: 1,
      metadata: { a: "b" },
    });
    assert.deepEqual((await plain.getInfo()).metadata, { a: "b" });
    await plain.kill();
  });

  test("kill() ends the sandbox; a shared wasmcell sandbox stays open", async () => {
    const mine = await Sandbox.create({ sandbox: wasmcell });
    await mine.runCode("a = 1");
    assert.equal(await mine.isRunning(), true);
    await mine.kill();
    assert.equal(await mine.isRunning(), false);
    await assert.rejects(mine.runCode("a"), ClosedError);
    await assert.rejects(mine.files.read("x"), ClosedError);
    assert.equal((await sbx.runCode("3 * 3")).text, "9", "the shared wasmcell sandbox still runs");
  });

  test("await using disposes it", async () => {
    let kept: Sandbox;
    {
      await using s = await Sandbox.create({ sandbox: wasmcell });
      kept = s;
      await s.runCode("1");
    }
    assert.equal(await kept.isRunning(), false);
  });

  test("the sandbox's own timeoutMs kills it", async () => {
    const s = await Sandbox.create({ sandbox: wasmcell, timeoutMs: 50 });
    // Waits for the timer however loaded the machine is (no timing asserted: only that it fires).
    for (let i = 0; i < 600 && (await s.isRunning()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await s.isRunning(), false);
    await assert.rejects(s.runCode("1"), ClosedError);
  });
});
