// What a worker sends back is untrusted: the envelope and every result field are checked and bounded
// against the run's own limits before anything reaches the caller.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { collectErrors, parseResult, parseWorkerMessage } from "../../../../src/engines/quickjs/threads/protocol.ts";
import { DEFAULT_LIMITS } from "../../../../src/options/index.ts";

const good = () => ({
  ok: true,
  value: 1,
  language: "javascript",
  stdout: "",
  stderr: "",
  outputTruncated: false,
  files: [] as unknown[],
  results: [] as unknown[],
  stats: { engine: "quickjs", wallMs: 1, outputBytes: 0 },
});
const done = (result: unknown, marks: unknown[] = [], names: unknown[] = []) =>
  ({ t: "done", id: 1, result, marks, names }) as const;
const parse = (result: unknown, limits = DEFAULT_LIMITS) => parseResult(done(result), "javascript", limits);

/** The refusal parseResult gave (a string), or "" for a result. */
const problem = (r: ReturnType<typeof parse>): string => (typeof r === "string" ? r : "");

describe("worker protocol", () => {
  it("re-parses a worker's display items with the one parser, and bounds their count", () => {
    const item = { data: { "text/plain": "x", "text/html": "<b>x</b>" }, main: false };
    const r = parse({ ...good(), results: [item] });
    assert.ok(typeof r !== "string" && r.ok);
    assert.deepEqual(r.results, [item]);
    assert.match(
      problem(parse({ ...good(), results: [{ data: { "text/plain": "x", "x/evil": "y" } }] })),
      /display items: .*x\/evil/,
    );
    assert.match(problem(parse({ ...good(), results: "no" })), /display items: .*not a list/);
    const many = Array.from({ length: DEFAULT_LIMITS.maxResults + 1 }, () => item);
    assert.match(problem(parse({ ...good(), results: many })), /limits\.maxResults/);
  });

  it("refuses malformed envelopes", () => {
    for (const bad of [null, 1, {}, { t: "nope" }, { t: "done", id: -1, marks: [], names: [] }, { t: "call", id: 1 }])
      assert.equal(parseWorkerMessage(bad), undefined, JSON.stringify(bad));
    assert.deepEqual(parseWorkerMessage({ t: "ready", extra: 1 }), { t: "ready" });
  });

  it("accepts a well-formed result and rebuilds it", () => {
    const r = parse(good());
    assert.equal(typeof r !== "string" && r.ok && r.value, 1);
  });

  it("refuses results that break the run's limits or the shapes", () => {
    const cases: Array<[string, (r: ReturnType<typeof good>) => unknown]> = [
      ["another language", (r) => ({ ...r, language: "python" })],
      ["output over the cap", (r) => ({ ...r, stdout: "x".repeat(DEFAULT_LIMITS.maxOutputBytes + 1000) })],
      [
        "too many files",
        (r) => ({
          ...r,
          files: Array.from({ length: 33 }, (_, i) => ({ path: `f${i}`, bytes: new Uint8Array(), mimeType: "x" })),
        }),
      ],
      [
        "a path outside the workdir",
        (r) => ({ ...r, files: [{ path: "../etc/passwd", bytes: new Uint8Array(1), mimeType: "x" }] }),
      ],
      [
        "file bytes over the cap",
        (r) => ({
          ...r,
          files: [{ path: "a", bytes: new Uint8Array(DEFAULT_LIMITS.maxFileBytes + 1), mimeType: "x" }],
        }),
      ],
      ["an unknown error kind", (r) => ({ ...r, ok: false, error: { kind: "pwned", name: "x", message: "y" } })],
      ["stats from another engine", (r) => ({ ...r, stats: { ...r.stats, engine: "native" } })],
      ["a negative wall time", (r) => ({ ...r, stats: { ...r.stats, wallMs: -1 } })],
    ];
    for (const [what, make] of cases) assert.equal(typeof parse(make(good())), "string", what);
  });

  it("restores Error names structured clone drops, in place", () => {
    const custom = Object.assign(new Error("m"), { name: "MyError" });
    const typed = Object.assign(new Error("t"), { name: "TypeError" });
    const value = { list: [custom], m: new Map([[1, typed]]) };
    const marks: Error[] = [];
    const names: string[] = [];
    collectErrors(value, marks, names);
    assert.deepEqual(names, ["MyError", "TypeError"]);
    const cloned = structuredClone({ value, marks, names });
    const r = parseResult(
      done({ ...good(), value: cloned.value }, cloned.marks, cloned.names),
      "javascript",
      DEFAULT_LIMITS,
    );
    assert.ok(typeof r !== "string" && r.ok);
    const v = r.value as typeof value;
    assert.equal(v.list[0]!.name, "MyError");
    assert.equal(Object.getPrototypeOf(v.m.get(1)), Error.prototype, "a plain Error, as in-process");
    assert.equal(v.m.get(1)!.name, "TypeError");
  });
});
