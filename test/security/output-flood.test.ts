// Threat: guest code writes without end, to exhaust host memory or the caller's context window.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { truncationMarker } from "../../src/kit/truncation.ts";
import { closeNative, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("quickjs", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { maxOutputBytes: 1000, timeoutMs: 300 } });
  });
  after(() => sandbox.close());

  it("cuts stdout+stderr at the cap with a marker, and streams only what was kept", async () => {
    const chunks: string[] = [];
    const r = await sandbox.run({
      language: "javascript",
      code: `for (let i = 0; i < 500; i++) { console.log("out " + i); console.error("err " + i); } "done"`,
      limits: { timeoutMs: 10_000 },
      onOutput: (c) => chunks.push(c.text),
    });
    assert.equal(r.ok && r.value, "done");
    assert.equal(r.outputTruncated, true);
    assert.match(r.stdout + r.stderr, /\n\[output truncated: over 1000 bytes \(limits\.maxOutputBytes\)\]\n$/);
    const kept =
      Buffer.byteLength(r.stdout + r.stderr) -
      Buffer.byteLength(/\n\[output truncated[^\n]*\n/.exec(r.stdout + r.stderr)![0]);
    assert.ok(kept <= 1000, `kept ${kept} bytes`);
    assert.equal(
      chunks.join("").length,
      r.stdout.length + r.stderr.length,
      "streamed chunks are exactly what was kept",
    );
    assert.ok(r.stats.outputBytes > 5000, "stats count what the guest tried to write");
  });

  it("an endless flood ends as timeout with the output still capped", async () => {
    const r = await sandbox.run({ language: "javascript", code: `while (true) console.log("x".repeat(100))` });
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(r.outputTruncated, true);
    assert.ok(Buffer.byteLength(r.stdout) < 1300);
  });

  it("multi-byte text is cut on a character boundary", async () => {
    const r = await sandbox.run({ language: "javascript", code: `console.log("é".repeat(2000))` });
    assert.equal(r.outputTruncated, true);
    assert.ok(!r.stdout.includes("\uFFFD"));
  });
});

describe("native", () => {
  after(closeNative);

  it("stdout + stderr are cut at maxOutputBytes with a marker; the bytes written are still counted", async () => {
    const r = await runNative(
      "import sys\nfor i in range(100000):\n    print('x' * 99)\n    print('e' * 9, file=sys.stderr)\n'done'",
      { maxOutputBytes: 10_000 },
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.equal(r.ok && r.value, "done");
    assert.equal(r.outputTruncated, true);
    assert.equal(r.stats.outputBytes, 100_000 * (100 + 10));
    assert.ok(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr) <= 10_000 + 100);
    assert.match(r.stdout, /\n\[output truncated: over 10000 bytes \(limits\.maxOutputBytes\)\]\n$/);
  });

  it("an endless flood ends at the deadline, truncated", async () => {
    const r = await runNative("while True:\n    print('x' * 1000)", { maxOutputBytes: 1000, timeoutMs: 1000 });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(r.outputTruncated, true);
  });

  it("a result value over maxResultBytes is kind output_limit", async () => {
    const r = await runNative("'x' * 100_000", { maxResultBytes: 10_000 });
    assert.equal(!r.ok && r.error.kind, "output_limit");
  });

  it("too many files, or too many bytes of files, are kind output_limit", async () => {
    const many = await runNative("for i in range(5):\n    open(f'f{i}.txt', 'w').write('x')", { maxFiles: 3 });
    assert.equal(!many.ok && many.error.kind, "output_limit");
    assert.match(!many.ok ? many.error.message : "", /more than 3 files \(limits\.maxFiles\)/);
    const big = await runNative("open('big.bin', 'wb').write(b'x' * 5000)", { maxFileBytes: 4000 });
    assert.equal(!big.ok && big.error.kind, "output_limit");
  });
});

describe("pyodide", () => {
  after(closePyodide);

  it("stdout + stderr are cut at maxOutputBytes with a marker; the bytes written are still counted", async () => {
    const r = await runPy(
      "import sys\nfor i in range(100000):\n    print('x' * 99)\n    print('e' * 9, file=sys.stderr)\n'done'",
      { maxOutputBytes: 10_000 },
    );
    assert.equal(r.ok && r.value, "done", JSON.stringify(!r.ok && r.error));
    assert.equal(r.outputTruncated, true);
    assert.equal(r.stats.outputBytes, 100_000 * (100 + 10));
    assert.ok(Buffer.byteLength(r.stdout) + Buffer.byteLength(r.stderr) <= 10_000 + 100);
    assert.match(r.stdout + r.stderr, /\n\[output truncated: over 10000 bytes \(limits\.maxOutputBytes\)\]\n$/);
  });

  it("an endless flood ends at the deadline, truncated", async () => {
    const r = await runPy("while True:\n    print('x' * 1000)", { maxOutputBytes: 1000, timeoutMs: 1000 });
    assert.equal(!r.ok && r.error.kind, "timeout");
    assert.equal(r.outputTruncated, true);
    assert.ok(Buffer.byteLength(r.stdout) <= 1000 + 100);
  });
});

describe("pyodide and native", () => {
  after(async () => Promise.all([closePyodide(), closeNative()]));

  it("end cut output with the same marker for the same limit", async () => {
    const code = "for i in range(1000):\n    print('x' * 99)";
    const [py, native] = await Promise.all([
      runPy(code, { maxOutputBytes: 500 }),
      runNative(code, { maxOutputBytes: 500 }),
    ]);
    const marker = (r: typeof py) => /\n\[output truncated[^\n]*\n$/.exec(r.stdout)?.[0];
    assert.equal(marker(py), truncationMarker(500));
    assert.equal(marker(native), marker(py));
  });
});
