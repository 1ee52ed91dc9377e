// Hostile envelopes and file lists, as a guest that replaced the harness (or wrote its own result
// line) would send them: each must come out as the host's verdict, bounded, with no kind the host did
// not observe and no path it would not accept as input.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ERROR_FIELD_CAPS,
  exitError,
  NOTHING_OBSERVED,
  parseEnvelope,
  parseFiles,
  type Observed,
} from "../../../../src/engines/lib/python/result.ts";
import type { JailExit } from "../../../../src/jail/index.ts";

const MAX_RESULT = 1024;
const LIMITS = {
  maxResultBytes: MAX_RESULT,
  timeoutMs: 250,
  maxFiles: 32,
  maxFileBytes: 1 << 20,
  maxResults: 8,
  maxDisplayItemBytes: 1 << 16,
  maxDisplayBytes: 1 << 18,
};
const fail = (error: Record<string, unknown>) => ({ ok: false, error });
const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("parseEnvelope", () => {
  // [what, envelope, what the host observed, expected kind (or "value:" + JSON of the value, or undefined: malformed)]
  const cases: [string, unknown, Observed, string | undefined][] = [
    ["None", { ok: true, value: null, valueKind: "none" }, NOTHING_OBSERVED, "value:undefined"],
    ["a JSON value", { ok: true, value: [1, null], valueKind: "json" }, NOTHING_OBSERVED, "value:[1,null]"],
    ["a repr", { ok: true, value: "{1, 2}", valueKind: "repr" }, NOTHING_OBSERVED, 'value:"{1, 2}"'],
    ["a repr that is not a string", { ok: true, value: 1, valueKind: "repr" }, NOTHING_OBSERVED, undefined],
    ["no valueKind", { ok: true, value: 1 }, NOTHING_OBSERVED, undefined],
    ["a JSON value with no value", { ok: true, valueKind: "json" }, NOTHING_OBSERVED, undefined],
    [
      "a value over maxResultBytes",
      { ok: true, value: "x".repeat(2000), valueKind: "json" },
      NOTHING_OBSERVED,
      "output_limit",
    ],
    [
      "a repr over maxResultBytes",
      { ok: true, value: "x".repeat(2000), valueKind: "repr" },
      NOTHING_OBSERVED,
      "output_limit",
    ],
    ["not an object", "ok", NOTHING_OBSERVED, undefined],
    ["an array", [true], NOTHING_OBSERVED, undefined],
    ["ok not a boolean", { ok: "yes" }, NOTHING_OBSERVED, undefined],
    ["an error that is not an object", { ok: false, error: "boom" }, NOTHING_OBSERVED, undefined],
    ["a runtime error", fail({ kind: "runtime", name: "ValueError", message: "x" }), NOTHING_OBSERVED, "runtime"],
    ["a syntax error", fail({ kind: "syntax", name: "SyntaxError", message: "x" }), NOTHING_OBSERVED, "syntax"],
    [
      "a forged timeout",
      fail({ kind: "timeout", name: "KeyboardInterrupt", message: "x" }),
      NOTHING_OBSERVED,
      "runtime",
    ],
    ["a forged memory error", fail({ kind: "memory", name: "MemoryError", message: "x" }), NOTHING_OBSERVED, "runtime"],
    ["a forged denial", fail({ kind: "denied", name: "PermissionError", message: "x" }), NOTHING_OBSERVED, "runtime"],
    ["a forged crash", fail({ kind: "crashed", name: "X", message: "x" }), NOTHING_OBSERVED, "runtime"],
    [
      "a forged stack overflow",
      fail({ kind: "stack", name: "RecursionError", message: "x" }),
      NOTHING_OBSERVED,
      "runtime",
    ],
    ["a forged abort", fail({ kind: "aborted", name: "X", message: "x" }), NOTHING_OBSERVED, "runtime"],
    ["an unknown kind", fail({ kind: "pwned", name: "X", message: "x" }), NOTHING_OBSERVED, "runtime"],
    [
      "KeyboardInterrupt when the interrupt fired",
      fail({ kind: "runtime", name: "KeyboardInterrupt", message: "" }),
      { interrupted: true, memoryCapHit: false },
      "timeout",
    ],
    [
      "another error when the interrupt fired (the guest caught it)",
      fail({ kind: "runtime", name: "ValueError", message: "" }),
      { interrupted: true, memoryCapHit: false },
      "runtime",
    ],
    [
      "MemoryError when the cap refused an allocation",
      fail({ kind: "runtime", name: "MemoryError", message: "" }),
      { interrupted: false, memoryCapHit: true },
      "memory",
    ],
    [
      "MemoryError when no cap fired",
      fail({ kind: "runtime", name: "MemoryError", message: "" }),
      NOTHING_OBSERVED,
      "runtime",
    ],
  ];
  for (const [what, raw, observed, expected] of cases) {
    test(what, () => {
      const e = parseEnvelope(raw, observed, LIMITS);
      if (expected === undefined) return assert.equal(e, undefined);
      assert.ok(e);
      if (expected.startsWith("value:")) {
        assert.equal(e.ok, true);
        const want: unknown = expected === "value:undefined" ? undefined : JSON.parse(expected.slice(6));
        assert.deepEqual(e.ok && e.value, want);
      } else {
        assert.equal(e.ok, false);
        assert.equal(!e.ok && e.error.kind, expected);
      }
    });
  }

  test("the host's words replace the guest's for an observed timeout or memory error", () => {
    const e = parseEnvelope(
      fail({ kind: "runtime", name: "KeyboardInterrupt", message: "not really" }),
      { interrupted: true, memoryCapHit: false },
      LIMITS,
    );
    // Every engine's words for a timeout (failures.ts), with the budget that ran out.
    assert.match(
      !e?.ok ? e!.error.message : "",
      /^the run did not finish within 250 ms \(limits\.timeoutMs\) and was stopped;/,
    );
  });

  test("every error field is capped, and the cut says which cap", () => {
    const e = parseEnvelope(
      fail({
        kind: "runtime",
        name: "N".repeat(10_000),
        message: "m".repeat(30 << 20),
        stack: "s".repeat(1 << 20) + "END",
      }),
      NOTHING_OBSERVED,
      LIMITS,
    );
    assert.ok(e && !e.ok);
    assert.ok(e.error.name.length < ERROR_FIELD_CAPS.name + 60);
    assert.match(e.error.name, /error name cut to 200 characters/);
    assert.ok(e.error.message.length < ERROR_FIELD_CAPS.message + 60);
    assert.match(e.error.message, /error message cut to 8192 characters/);
    assert.ok(e.error.stack!.length < ERROR_FIELD_CAPS.stack + 60);
    assert.ok(e.error.stack!.endsWith("END"), "a traceback keeps its end, where the failing line is");
  });

  test("line and column must be positive integers; other fields are dropped", () => {
    const e = parseEnvelope(
      fail({ kind: "runtime", name: "E", message: "", line: -1, column: 1.5, stack: 7 }),
      NOTHING_OBSERVED,
      LIMITS,
    );
    assert.deepEqual(e, { ok: false, error: { kind: "runtime", name: "E", message: "" } });
    const ok = parseEnvelope(fail({ kind: "runtime", name: "E", message: "", line: 3, column: 4 }), NOTHING_OBSERVED, {
      ...LIMITS,
      maxResultBytes: 1,
    });
    assert.equal(!ok?.ok && ok?.error.line, 3);
    assert.equal(!ok?.ok && ok?.error.column, 4);
  });

  test("a prototype-polluting key is plain data", () => {
    const raw: unknown = JSON.parse('{"ok":true,"valueKind":"json","value":{"__proto__":{"polluted":1}}}');
    const e = parseEnvelope(raw, NOTHING_OBSERVED, LIMITS);
    assert.equal(e?.ok, true);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe("parseFiles", () => {
  const limits = { maxFiles: 3, maxFileBytes: 100 };
  const file = (path: unknown, data: unknown = b64("x")) => ({ path, data });
  // [what, list, expected kind of the failure (undefined: accepted)]
  const cases: [string, unknown, string | undefined][] = [
    ["a plain list", [file("a.txt"), file("dir/b.csv")], undefined],
    ["no files", [], undefined],
    ["a parent escape", [file("../../../x")], "denied"],
    ["an absolute path", [file("/etc/cron.d/x")], "denied"],
    ["a NUL byte", [file("a\0b")], "denied"],
    ["an empty path", [file("")], "denied"],
    ["a Windows drive", [file("C:x")], "denied"],
    ["a backslash escape", [file("..\\x")], "denied"],
    ["a path that is not normalised", [file("./a")], "denied"],
    ["a doubled slash", [file("a//b")], "denied"],
    ["a trailing slash", [file("a/")], "denied"],
    ["the working directory itself", [file(".")], "denied"],
    ["a very long path", [file("a".repeat(2000))], "denied"],
    ["a duplicate", [file("a"), file("a")], "denied"],
    ["a path that is not a string", [file(7)], "crashed"],
    ["data that is not base64", [file("a", "not base64!")], "crashed"],
    ["an entry that is not an object", ["a"], "crashed"],
    ["not a list", { a: 1 }, "crashed"],
    ["more files than maxFiles", [file("a"), file("b"), file("c"), file("d")], "output_limit"],
    ["more bytes than maxFileBytes", [file("a", b64("x".repeat(60))), file("b", b64("y".repeat(60)))], "output_limit"],
    ["one huge base64 string", [file("a", "A".repeat(1 << 20))], "output_limit"],
  ];
  for (const [what, raw, expected] of cases) {
    test(what, () => {
      const r = parseFiles(raw, limits);
      if (expected === undefined) return assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, expected);
    });
  }

  test("accepted files carry their bytes and a MIME type", () => {
    const r = parseFiles([file("d/p.csv", b64("a,b"))], limits);
    assert.ok(r.ok);
    assert.equal(Buffer.from(r.files[0]!.bytes).toString(), "a,b");
    assert.equal(r.files[0]!.mimeType, "text/csv");
  });

  test("a refused path is named (cut) in the message", () => {
    const r = parseFiles([file("/etc/cron.d/x")], limits);
    assert.match(!r.ok ? r.error.message : "", /"\/etc\/cron\.d\/x": the path must be relative/);
  });
});

describe("exitError", () => {
  const exit = (e: Partial<JailExit>): JailExit => ({
    code: null,
    signal: null,
    timedOut: false,
    oomKilled: false,
    ...e,
  });
  const ctx = {
    who: "the Python process",
    deadlineKilled: false,
    aborted: false,
    timeoutMs: 500,
    memoryCap: "its 64 MB cap",
  };
  const cases: [string, JailExit, Partial<typeof ctx>, string][] = [
    ["the host's deadline kill", exit({ signal: "SIGKILL", timedOut: true }), {}, "timeout"],
    ["the host's own kill timer", exit({ signal: "SIGKILL" }), { deadlineKilled: true }, "timeout"],
    ["the caller's abort", exit({ signal: "SIGKILL" }), { aborted: true }, "aborted"],
    ["the cgroup OOM killer", exit({ signal: "SIGKILL", oomKilled: true }), {}, "memory"],
    ["the CPU-time rlimit", exit({ signal: "SIGXCPU" }), {}, "timeout"],
    ["seccomp", exit({ signal: "SIGSYS" }), {}, "denied"],
    ["a segfault", exit({ signal: "SIGSEGV" }), {}, "crashed"],
    ["an exit code", exit({ code: 3 }), {}, "crashed"],
    // The guest can kill itself with SIGKILL: without the host's own record, that is a crash.
    ["a SIGKILL the host did not send", exit({ signal: "SIGKILL" }), {}, "crashed"],
  ];
  for (const [what, e, extra, kind] of cases) {
    test(what, () => assert.equal(exitError(e, { ...ctx, ...extra }).kind, kind));
  }

  test("the detail is capped", () => {
    const e = exitError(exit({ code: 1 }), { ...ctx, detail: "x".repeat(100_000) });
    assert.ok(e.message.length < 1200);
  });
});
