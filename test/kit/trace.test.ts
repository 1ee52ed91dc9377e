// The tracing room: the traceparent parser, the attribute allowlist, and the span tree a run makes,
// read back from the OpenTelemetry SDK's in-memory exporter.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, describe, it } from "node:test";
import { trace } from "@opentelemetry/api";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { Gate } from "../../src/pool/gate.ts";
import { activeTraceparent, SPANS, traceRun } from "../../src/kit/trace.ts";
import {
  ATTRIBUTES,
  allowedAttribute,
  allowedAttributes,
  methodName,
  type TraceAttributes,
} from "../../src/kit/trace-attributes.ts";
import { formatTraceparent, parseTraceparent, TRACEPARENT_MAX_CHARS } from "../../src/kit/traceparent.ts";
import { parentOf, recordSpans, type Recorder } from "../helpers/trace.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";
const VALID = `00-${TRACE}-${PARENT}-01`;

describe("parseTraceparent", () => {
  it("reads a version-00 value: ids and flags", () => {
    assert.deepEqual(parseTraceparent(VALID), { traceId: TRACE, spanId: PARENT, traceFlags: 1 });
    assert.deepEqual(parseTraceparent(`00-${TRACE}-${PARENT}-00`)?.traceFlags, 0);
  });

  it("reads a later version by its first four fields", () => {
    assert.equal(parseTraceparent(`01-${TRACE}-${PARENT}-01-what-comes-next`)?.spanId, PARENT);
    assert.equal(parseTraceparent(`01-${TRACE}-${PARENT}-01`)?.spanId, PARENT);
  });

  it("refuses everything the specification calls invalid", () => {
    for (const bad of [
      "",
      "00",
      `00-${TRACE}-${PARENT}-01-extra`, // version 00 is exactly 55 characters
      `ff-${TRACE}-${PARENT}-01`, // version ff is invalid
      `00-${TRACE.toUpperCase()}-${PARENT}-01`, // lowercase hex only
      `00-${"0".repeat(32)}-${PARENT}-01`, // all-zero trace id
      `00-${TRACE}-${"0".repeat(16)}-01`, // all-zero span id
      `00-${TRACE}-${PARENT}-1`,
      `00-${TRACE}-${PARENT}-0g`,
      ` ${VALID}`,
      `${VALID}\n`,
      `01-${TRACE}-${PARENT}-01x`,
      `01-${TRACE}-${PARENT}-01-${"x".repeat(TRACEPARENT_MAX_CHARS)}`, // over the bound: not read
      42,
      null,
      { traceId: TRACE },
    ])
      assert.equal(parseTraceparent(bad), undefined, JSON.stringify(bad));
  });

  it("formats what it parses back to the same value", () => {
    assert.equal(formatTraceparent(parseTraceparent(VALID)!), VALID);
  });
});

describe("the attribute allowlist", () => {
  it("takes only listed keys, each with a value of its type", () => {
    assert.equal(allowedAttribute("wasmcell.engine", "quickjs"), true);
    assert.equal(allowedAttribute("wasmcell.engine", "quickjs-secret"), false);
    assert.equal(allowedAttribute("wasmcell.code", "print(1)"), false);
    assert.equal(allowedAttribute("wasmcell.code.bytes", 8), true);
    assert.equal(allowedAttribute("wasmcell.code.bytes", "8"), false);
    assert.equal(allowedAttribute("wasmcell.code.bytes", -1), false);
    assert.equal(allowedAttribute("wasmcell.code.bytes", Number.NaN), false);
    assert.equal(allowedAttribute("wasmcell.ok", "true"), false);
    assert.equal(allowedAttribute("error.type", "timeout"), true);
    assert.equal(allowedAttribute("error.type", "ZeroDivisionError: secret"), false);
    assert.equal(allowedAttribute("wasmcell.limit", "timeoutMs"), true);
    assert.equal(allowedAttribute("wasmcell.limit", "maxSecrets"), false);
    assert.equal(allowedAttribute("wasmcell.host_call.function", "lookup"), true);
    assert.equal(allowedAttribute("wasmcell.host_call.function", "a b"), false);
    assert.equal(allowedAttribute("toString", "x"), false);
    assert.equal(allowedAttribute("__proto__", "x"), false);
  });

  it("drops whatever does not pass, whatever the caller's types said", () => {
    const smuggled = { "wasmcell.engine": "pyodide", "wasmcell.stdout": "secret", "url.full": "http://x/secret" };
    assert.deepEqual(allowedAttributes(smuggled as unknown as Partial<TraceAttributes>), {
      "wasmcell.engine": "pyodide",
    });
  });

  it("holds no string attribute but closed sets and host-function names", () => {
    for (const [key, spec] of Object.entries(ATTRIBUTES))
      assert.ok(["boolean", "number", "enum", "host-function"].includes(spec.type), key);
  });

  it("names a method from a closed set", () => {
    assert.equal(methodName("GET"), "GET");
    assert.equal(methodName("SECRET"), "_OTHER");
    assert.equal(methodName(""), "_OTHER");
  });

  it("only the tracing room imports @opentelemetry/api in src/", () => {
    const files = (readdirSync("src", { recursive: true }) as string[]).filter((f) => f.endsWith(".ts"));
    const importers = files.filter((f) => /from "@opentelemetry\//.test(readFileSync(join("src", f), "utf8")));
    assert.deepEqual(importers, [join("kit", "trace.ts")]);
    // ...and sets attributes only through the allowlist.
    const room = readFileSync("src/kit/trace.ts", "utf8");
    assert.equal(room.match(/setAttributes?\(/g)?.length, 1);
    assert.equal(room.match(/attributes: allowedAttributes\(/g)?.length, 1);
    assert.doesNotMatch(room, /\.(recordException|addEvent|updateName)\(/);
  });
});

describe("without a provider", () => {
  it("a run is not traced and its request is handed on as it is", () => {
    const shape = {
      language: "javascript",
      engine: "quickjs",
      code: "1",
      files: new Map(),
      hostFunctions: {},
      network: false,
      session: false,
    } as const;
    const run = traceRun(shape, VALID);
    assert.equal(run.recording, false);
    const request = { hostFunctions: {}, emit: undefined };
    assert.equal(run.wrap(request), request);
  });
});

// One provider for the suites below, registered once (after the test above, which needs none).
let recorder: Recorder | undefined;
const recording = (): Recorder => (recorder ??= recordSpans());
after(() => recorder?.close());

describe("spans of a run", () => {
  let rec: Recorder;
  let sandbox: Sandbox;
  before(async () => {
    rec = recording();
    sandbox = await createSandbox({
      javascript: { isolation: "in-process", hostFunctions: { lookup: (args: unknown[]) => ({ n: args.length }) } },
      network: { allow: ["allowed.example"] },
    });
  });
  after(() => sandbox.close());
  beforeEach(() => rec.reset());

  const byName = (name: string) => rec.spans().filter((s) => s.name === name);

  it("go under the request's traceparent: one tree, the caller's trace id", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: `const a = await lookup(1, 2); try { await fetch("http://denied.example/x"); } catch {} a.n`,
      traceparent: VALID,
    });
    assert.equal(r.ok, true, JSON.stringify(r));
    const [run] = byName(SPANS.run);
    assert.ok(run, "a run span");
    assert.equal(run.spanContext().traceId, TRACE);
    assert.equal(parentOf(run), PARENT);
    assert.deepEqual(run.attributes, {
      "wasmcell.language": "javascript",
      "wasmcell.engine": "quickjs",
      "wasmcell.session": false,
      "wasmcell.code.bytes": Buffer.byteLength(
        `const a = await lookup(1, 2); try { await fetch("http://denied.example/x"); } catch {} a.n`,
      ),
      "wasmcell.files.count": 0,
      "wasmcell.files.bytes": 0,
      "wasmcell.host_functions.count": 1,
      "wasmcell.network": true,
      "wasmcell.ok": true,
      "wasmcell.output.bytes": 0,
      "wasmcell.output.truncated": false,
      "wasmcell.result.files.count": 0,
      "wasmcell.result.files.bytes": 0,
      "wasmcell.result.displays.count": 0,
      "wasmcell.wall_ms": r.stats.wallMs,
      ...(r.stats.peakMemoryBytes !== undefined ? { "wasmcell.peak_memory.bytes": r.stats.peakMemoryBytes } : {}),
    });
    const [call] = byName(SPANS.hostCall);
    assert.ok(call, "a host-call span");
    assert.equal(parentOf(call), run.spanContext().spanId);
    assert.deepEqual(call.attributes, { "wasmcell.host_call.function": "lookup", "wasmcell.host_call.args": 2 });
    const [egress] = byName(SPANS.egress);
    assert.ok(egress, "an egress span");
    assert.equal(parentOf(egress), run.spanContext().spanId);
    assert.equal(egress.attributes["wasmcell.egress.allowed"], false);
    assert.equal(egress.attributes["wasmcell.egress.reason"], "not-allowed");
    assert.equal(egress.attributes["error.type"], "denied");
    assert.equal(egress.attributes["http.request.method"], "GET");
    for (const s of rec.spans()) assert.equal(s.spanContext().traceId, TRACE, s.name);
  });

  it("go under the caller's active span when the request names none", async () => {
    const tracer = trace.getTracer("the-application");
    await tracer.startActiveSpan("handle-request", async (mine) => {
      const r = await sandbox.run({ language: "javascript", code: "1 + 1" });
      assert.equal(r.ok, true);
      // A queue job made here carries this span on.
      assert.equal(activeTraceparent(), formatTraceparent(mine.spanContext()));
      mine.end();
    });
    const [run] = byName(SPANS.run);
    const [mine] = byName("handle-request");
    assert.equal(parentOf(run!), mine!.spanContext().spanId);
    assert.equal(run!.spanContext().traceId, mine!.spanContext().traceId);
  });

  it("ignore a traceparent that is not a valid one, and say so", async () => {
    const r = await sandbox.run({ language: "javascript", code: "1", traceparent: "00-not-a-trace-01" });
    assert.equal(r.ok, true);
    const [run] = byName(SPANS.run);
    assert.equal(run!.attributes["wasmcell.traceparent.ignored"], true);
    assert.equal(parentOf(run!), undefined);
  });

  it("refuse a traceparent that is not a string or is over the bound, naming the field", async () => {
    for (const traceparent of [42, "0".repeat(TRACEPARENT_MAX_CHARS + 1)])
      await assert.rejects(
        sandbox.run({ language: "javascript", code: "1", traceparent } as never),
        (e: unknown) => e instanceof InvalidOptionError && e.field.startsWith("request.traceparent"),
      );
  });

  it("record a failure by its kind and limit, never its message", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: "while (true) {}",
      limits: { timeoutMs: 100 },
      traceparent: VALID,
    });
    assert.equal(r.ok, false);
    const [run] = byName(SPANS.run);
    assert.equal(run!.attributes["error.type"], "timeout");
    assert.equal(run!.attributes["wasmcell.limit"], "timeoutMs");
    assert.deepEqual(run!.status, { code: 2, message: "timeout" });
  });

  it("a host function that throws: its span says threw, not what", async () => {
    const r = await sandbox.run({
      language: "javascript",
      code: "try { await boom() } catch (e) { e.message }",
      hostFunctions: {
        boom: () => {
          throw new Error("the application's secret reason");
        },
      },
    });
    assert.equal(r.ok, true);
    const [call] = byName(SPANS.hostCall);
    assert.equal(call!.attributes["error.type"], "threw");
    assert.deepEqual(call!.status, { code: 2, message: "threw" });
  });

  it("a run that waits for a slot has its admission span; the runs admitted at once have none", async () => {
    // In-process, a sandbox runs MAX_RUNS_PER_WORKER (8) at once: the ninth, started together, waits.
    const all = await Promise.all(
      Array.from({ length: 9 }, () => sandbox.run({ language: "javascript", code: "1", traceparent: VALID })),
    );
    assert.ok(all.every((r) => r.ok));
    const waits = byName(SPANS.admission);
    assert.equal(waits.length, 1);
    const runIds = byName(SPANS.run).map((s) => s.spanContext().spanId);
    assert.equal(runIds.length, 9);
    assert.ok(runIds.includes(parentOf(waits[0]!)!), "under one of the runs");
    assert.equal(waits[0]!.attributes["wasmcell.admission.waiting"], 0);
  });

  it("a session's snapshot and fork are spans under the caller's", async () => {
    const session = await sandbox.session({ language: "javascript" });
    await session.run({ code: "globalThis.n = 1" });
    const tracer = trace.getTracer("the-application");
    await tracer.startActiveSpan("save", async (mine) => {
      await session.snapshot();
      const copy = await session.fork();
      await copy.close();
      mine.end();
    });
    await session.close();
    const [mine] = byName("save");
    const [fork] = byName(SPANS.fork);
    const snapshots = byName(SPANS.snapshot);
    assert.equal(parentOf(fork!), mine!.spanContext().spanId);
    assert.equal(snapshots.length, 2, "snapshot() and the fork's copy");
    assert.equal(parentOf(snapshots[0]!), mine!.spanContext().spanId);
    assert.ok((snapshots[0]!.attributes["wasmcell.snapshot.bytes"] as number) > 0);
    assert.equal(parentOf(snapshots[1]!), fork!.spanContext().spanId);
    const [sessionRun] = byName(SPANS.run);
    assert.equal(sessionRun!.attributes["wasmcell.session"], true);
  });
});

describe("an evicted session", () => {
  let rec: Recorder;
  before(() => (rec = recording()));
  beforeEach(() => rec.reset());

  it("is evicted in a root span of its own, and resumed under the run that needed it", async () => {
    await using sb = await createSandbox({ javascript: { isolation: "in-process" }, sessions: { idleMs: 30 } });
    const session = await sb.session({ language: "javascript" });
    await session.run({ code: "globalThis.n = 41", traceparent: VALID });
    const evicted = () => rec.spans().find((s) => s.name === SPANS.evict);
    for (let i = 0; i < 200 && !evicted(); i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok(evicted(), "the idle session was evicted");
    assert.equal(parentOf(evicted()!), undefined, "an eviction belongs to no call");
    assert.notEqual(evicted()!.spanContext().traceId, TRACE);
    const r = await session.run({ code: "n + 1", traceparent: VALID });
    assert.equal(r.ok && r.value, 42);
    await session.close();
    const resume = rec.spans().find((s) => s.name === SPANS.resume);
    const run = rec.spans().filter((s) => s.name === SPANS.run)[1];
    assert.ok(resume && run, "a resume and the second run");
    assert.equal(parentOf(resume), run.spanContext().spanId);
    assert.ok((resume.attributes["wasmcell.snapshot.bytes"] as number) > 0);
  });
});

describe("admission", () => {
  let rec: Recorder;
  before(() => (rec = recording()));
  beforeEach(() => rec.reset());

  it("a wait for a slot is a span under the waiting run; one admitted at once makes none", async () => {
    const gate = new Gate("test", 1, 4);
    const tracer = trace.getTracer("the-application");
    await gate.acquire();
    await tracer.startActiveSpan("run", async (mine) => {
      const waiting = gate.acquire();
      gate.release();
      await waiting;
      gate.release();
      mine.end();
    });
    const spans = rec.spans().filter((s) => s.name === SPANS.admission);
    assert.equal(spans.length, 1);
    const [mine] = rec.spans().filter((s) => s.name === "run");
    assert.equal(parentOf(spans[0]!), mine!.spanContext().spanId);
    assert.deepEqual(spans[0]!.attributes, { "wasmcell.admission.waiting": 0 });
  });

  it("a wait outside any traced call (an engine warming its pool) makes none", async () => {
    const gate = new Gate("test", 1, 4);
    await gate.acquire();
    const waiting = gate.acquire();
    gate.release();
    await waiting;
    assert.deepEqual(
      rec.spans().filter((s) => s.name === SPANS.admission),
      [],
    );
  });

  it("a wait that ends without a slot says why", async () => {
    const gate = new Gate("test", 1, 4);
    await gate.acquire();
    const controller = new AbortController();
    await trace.getTracer("the-application").startActiveSpan("run", async (mine) => {
      const waiting = gate.acquire(controller.signal);
      controller.abort();
      await assert.rejects(waiting);
      mine.end();
    });
    const [span] = rec.spans().filter((s) => s.name === SPANS.admission && s.attributes["error.type"]);
    assert.equal(span!.attributes["error.type"], "aborted");
  });
});
