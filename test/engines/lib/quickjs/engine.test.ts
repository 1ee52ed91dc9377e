// Unit tests of the QuickJS engine through its Engine interface (resolveRequest → engine.run).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { QuickJSEngine } from "../../../../src/engines/lib/quickjs/index.ts";
import { resolveOptions, resolveRequest } from "../../../../src/options/index.ts";
import type { RunRequest, RunResult } from "../../../../src/core/types.ts";

describe("quickjs engine", () => {
  const engine = new QuickJSEngine();
  const options = resolveOptions({});
  before(() => engine.warm());
  after(() => engine.close());
  const run = (code: string, extra: Partial<RunRequest> = {}): Promise<RunResult> =>
    engine.run(resolveRequest({ language: "javascript", code, ...extra }, options));
  const value = async (code: string, extra: Partial<RunRequest> = {}) => {
    const r = await run(code, extra);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    return r.ok ? r.value : undefined;
  };

  describe("results", () => {
    it("returns the last expression of a script", async () => {
      assert.equal(await value("const a = 20;\na + 22"), 42);
      assert.equal(await value("'text'"), "text");
      assert.equal(await value("undefined"), undefined);
      assert.equal(await value("12n ** 2n"), 144n);
      assert.deepEqual(await value("[1, 'a', null, true]"), [1, "a", null, true]);
    });

    it("returns a module's default export; export makes it a module", async () => {
      assert.deepEqual(await value("const x = 2;\nexport default { x }"), { x: 2 });
      assert.equal(await value("export const y = 1;"), undefined);
    });

    it("awaits top-level await, a returned promise, and module top-level await", async () => {
      assert.equal(await value("const v = await Promise.resolve(20); v * 2"), 40);
      assert.equal(await value("(async () => 'later')()"), "later");
      assert.equal(await value("export default await new Promise((r) => setTimeout(() => r(7), 5))"), 7);
      assert.equal(
        await value("async function f() { await null; return 5 }\nf()"),
        5,
        "a promise after top-level await code is awaited too",
      );
      assert.equal(await value("export default (async () => 8)()"), 8);
    });
  });

  describe("console", () => {
    it("writes log/info/debug to stdout and warn/error to stderr, inspected like Node", async () => {
      const r =
        await run(`console.log("a", 1, { b: [1, { c: 2 }], s: "q" }, new Map([["k", 1]]), new Set([1]), [undefined, null]);
        console.info(-0, 10n, Symbol("s"), function named() {}, class K {});
        console.warn("w"); console.error(new TypeError("bad"));
        console.log("%s is %d years and %j", "Bob", 42, { x: 1 });
        class P { constructor() { this.x = 1 } }; console.debug(new P(), { deep: { er: { than: { two: 1 } } } })`);
      assert.equal(r.ok, true);
      const lines = r.stdout.split("\n");
      assert.equal(lines[0], "a 1 { b: [ 1, { c: 2 } ], s: 'q' } Map(1) { 'k' => 1 } Set(1) { 1 } [ undefined, null ]");
      assert.equal(lines[1], "-0 10n Symbol(s) [Function: named] [class K]");
      assert.equal(lines[2], `Bob is 42 years and {"x":1}`);
      assert.equal(lines[3], "P { x: 1 } { deep: { er: { than: [Object] } } }");
      assert.match(r.stderr, /^w\nTypeError: bad\n {4}at <eval> \(main\.js:3:\d+\)/);
    });

    it("streams chunks to onOutput as they are written", async () => {
      const chunks: string[] = [];
      await run(`console.log(1); await new Promise((r) => setTimeout(r, 5)); console.error(2)`, {
        onOutput: (c) => chunks.push(`${c.stream}:${c.text}`),
      });
      assert.deepEqual(chunks, ["stdout:1\n", "stderr:2\n"]);
    });
  });

  describe("timers", () => {
    it("runs setTimeout/setInterval/clearInterval/queueMicrotask in order", async () => {
      const r = await run(`const log = [];
        setTimeout(() => log.push("t10"), 10);
        setTimeout(() => log.push("t0"), 0);
        queueMicrotask(() => log.push("micro"));
        let n = 0; const id = setInterval(() => { log.push("i" + ++n); if (n === 3) clearInterval(id); }, 2);
        const cancelled = setTimeout(() => log.push("never"), 1); clearTimeout(cancelled);
        await new Promise((r) => setTimeout(r, 30));
        log`);
      assert.equal(r.ok, true);
      const log = r.ok ? (r.value as string[]) : [];
      assert.equal(log[0], "micro");
      assert.ok(
        log.includes("t0") &&
          log.includes("t10") &&
          log.includes("i3") &&
          !log.includes("i4") &&
          !log.includes("never"),
        log.join(","),
      );
    });

    it("waits for pending timers after the last expression, like Node", async () => {
      const r = await run(`setTimeout(() => console.log("after"), 5); "value"`);
      assert.equal(r.ok && r.value, "value");
      assert.equal(r.stdout, "after\n");
    });

    it("an exception in a timer callback fails the run", async () => {
      const r = await run(`setTimeout(() => { throw new RangeError("in timer") }, 1)`);
      assert.equal(!r.ok && r.error.kind, "runtime");
      assert.equal(!r.ok && r.error.name, "RangeError");
    });
  });

  describe("errors a model can act on", () => {
    it("syntax errors carry kind, line and column", async () => {
      const r = await run("const ok = 1;\nconst bad = ;");
      assert.equal(r.ok, false);
      assert.deepEqual(
        !r.ok && { kind: r.error.kind, name: r.error.name, line: r.error.line, column: r.error.column },
        { kind: "syntax", name: "SyntaxError", line: 2, column: 13 },
      );
    });

    it("exceptions carry name, message, the user's stack and position", async () => {
      const r = await run("function inner() {\n  return null.field;\n}\ninner();");
      assert.equal(!r.ok && r.error.kind, "runtime");
      assert.equal(!r.ok && r.error.name, "TypeError");
      assert.equal(!r.ok && r.error.message, "cannot read property 'field' of null");
      assert.equal(!r.ok && r.error.line, 2);
      assert.match(!r.ok ? (r.error.stack ?? "") : "", /at inner \(main\.js:2:/);
      assert.doesNotMatch(!r.ok ? (r.error.stack ?? "") : "", /wasmcell/);
    });

    it("a thrown non-Error is reported readably", async () => {
      const r = await run(`throw { code: 7 }`);
      assert.equal(!r.ok && r.error.message, "Uncaught { code: 7 }");
    });

    it("a rejected top-level await is a runtime error with its position", async () => {
      const r = await run(`await null;\nawait Promise.reject(new Error("nope"))`);
      assert.equal(!r.ok && r.error.kind, "runtime");
      assert.equal(!r.ok && r.error.message, "nope");
    });
  });

  describe("TypeScript", () => {
    it("strips types and keeps the user's positions", async () => {
      assert.equal(
        await value(
          "interface P { x: number }\nconst p: P = { x: 2 };\nfunction sq<T extends number>(n: T): number { return n * n }\nsq(p.x)",
          { language: "typescript" },
        ),
        4,
      );
      const r = await run("type T = string;\nconst s: T = 'a';\nnull.x;", { language: "typescript" });
      assert.equal(!r.ok && r.error.line, 3);
    });

    it("a TypeScript syntax error is kind syntax at the user's line", async () => {
      const r = await run("const a = 1;\nlet b: = 2;", { language: "typescript" });
      assert.equal(!r.ok && r.error.kind, "syntax");
      assert.equal(!r.ok && r.error.line, 2);
    });

    it("TypeScript that needs a transform (enum) is a syntax error that says so", async () => {
      const r = await run("enum E { A }", { language: "typescript" });
      assert.equal(!r.ok && r.error.kind, "syntax");
      assert.match(!r.ok ? r.error.message : "", /only strips types/);
    });
  });

  describe("fs (in memory)", () => {
    it("reads request files, returns created and changed files only", async () => {
      const r = await run(
        `const text = fs.readFileSync("data/in.csv", "utf8");
         fs.writeFileSync("out.json", JSON.stringify({ rows: text.trim().split("\\n").length }));
         fs.appendFileSync("log.txt", "a"); fs.appendFileSync("log.txt", "b");
         fs.writeFileSync("bytes.bin", new Uint8Array([1, 2, 3]));
         [fs.existsSync("data/in.csv"), fs.existsSync("data"), fs.existsSync("nope"), fs.readdirSync(), fs.readdirSync("data"), fs.readFileSync("bytes.bin") instanceof Uint8Array]`,
        { files: { "data/in.csv": "a\nb\nc\n", "keep.txt": "same" } },
      );
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.ok && r.value, [
        true,
        true,
        false,
        ["bytes.bin", "data", "keep.txt", "log.txt", "out.json"],
        ["in.csv"],
        true,
      ]);
      const files = Object.fromEntries(r.files.map((f) => [f.path, new TextDecoder().decode(f.bytes)]));
      assert.deepEqual(Object.keys(files).sort(), ["bytes.bin", "log.txt", "out.json"]);
      assert.equal(files["out.json"], `{"rows":3}`);
      assert.equal(files["log.txt"], "ab");
      assert.equal(r.files.find((f) => f.path === "out.json")?.mimeType, "application/json");
    });

    it("writing past maxFiles or maxFileBytes is kind output_limit", async () => {
      const many = await run(`for (let i = 0; i < 5; i++) fs.writeFileSync("f" + i, "x")`, { limits: { maxFiles: 3 } });
      assert.equal(!many.ok && many.error.kind, "output_limit");
      assert.match(!many.ok ? many.error.message : "", /maxFiles/);
      const big = await run(`try { fs.writeFileSync("big", "x".repeat(5000)) } catch {} "swallowed"`, {
        limits: { maxFileBytes: 1000 },
      });
      assert.equal(!big.ok && big.error.kind, "output_limit", "catching the error does not make the run succeed");
    });

    it("unlinkSync removes a file; a missing file is ENOENT", async () => {
      const r = await run(
        `fs.unlinkSync("a.txt"); let m; try { fs.readFileSync("a.txt") } catch (e) { m = e.message } m`,
        { files: { "a.txt": "x" } },
      );
      assert.match(r.ok ? String(r.value) : "", /^ENOENT/);
    });
  });

  describe("host functions", () => {
    it("pass data in, data out, with an abort signal; a host throw is a guest exception", async () => {
      let seen: unknown;
      const r = await run(
        `const sum = await add({ a: 2, b: [3] }, new Date(0), undefined);
        let err; try { await fail() } catch (e) { err = e.name + ": " + e.message }
        [sum, err]`,
        {
          hostFunctions: {
            add: (args, ctx) => {
              seen = args;
              assert.ok(ctx.signal instanceof AbortSignal);
              const [o] = args as [{ a: number; b: number[] }];
              return { total: o.a + o.b[0]! };
            },
            fail: () => {
              throw new RangeError("host says no");
            },
          },
        },
      );
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.ok && r.value, [{ total: 5 }, "RangeError: host says no"]);
      assert.deepEqual(seen, [{ a: 2, b: [3] }, new Date(0), undefined]);
    });
  });

  describe("isolation and state", () => {
    it("each run has a fresh context", async () => {
      await run("globalThis.leak = 1; Array.prototype.evil = 1");
      assert.deepEqual(await value("[typeof leak, typeof [].evil]"), ["undefined", "undefined"]);
    });

    it("sessions keep state across runs on purpose", async () => {
      const s = await engine.openSession();
      try {
        const a = await s.run(
          resolveRequest(
            { language: "javascript", code: "let count = 1; function bump() { return ++count }" },
            options,
          ),
        );
        assert.equal(a.ok, true);
        const b = await s.run(resolveRequest({ language: "javascript", code: "bump(); bump()" }, options));
        assert.equal(b.ok && b.value, 3);
        const c = await s.run(
          resolveRequest({ language: "javascript", code: "while (true) {}", limits: { timeoutMs: 50 } }, options),
        );
        assert.equal(!c.ok && c.error.kind, "timeout", "per-run deadline applies in a session");
        const d = await s.run(resolveRequest({ language: "javascript", code: "await null; count" }, options));
        assert.equal(d.ok && d.value, 3, "state survives a timed-out run");
      } finally {
        await s.close();
      }
    });
  });

  describe("stats", () => {
    it("reports engine, wall time and output bytes; peak memory for longer runs", async () => {
      const r = await run(`console.log("12345"); const a = []; for (let i = 0; i < 2e5; i++) a.push({ i }); a.length`);
      assert.equal(r.stats.engine, "quickjs");
      assert.equal(r.stats.outputBytes, 6);
      assert.ok(r.stats.wallMs > 0);
      assert.ok((r.stats.peakMemoryBytes ?? 0) > 1_000_000, `peak ${r.stats.peakMemoryBytes}`);
    });
  });
});
