// Threat: the one server the network option allows is the attacker's, and it answers with what
// HTTP clients are not built for: statuses 000–099 and 600–999, 101 with an Upgrade, an
// informational answer and nothing after it, malformed heads, a body that trickles or stops short.
// Before the fix, 099 through the native tier's proxy ended the host's process (writeHead threw
// where nothing caught it), an upgrade left the request pending past every abort, and 600–999 left
// the guest's fetch() unsettled. On every tier: the host survives, each request settles with a
// clear message (or the body), the run ends well inside its deadline, and no socket is left open.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import type { RunRequest } from "../../src/core/types.ts";
import { networkWorld, type NetworkWorld } from "../helpers/network.ts";
import { fuzzAnswerFor } from "../helpers/fuzz-answers.ts";
import { HOSTILE_ANSWERS, hostileAnswer, hostileOutcome, startRawServer, type RawServer } from "../helpers/raw-http.ts";

const PATHS = Object.keys(HOSTILE_ANSWERS);
/** The same generator as test/network/fuzz.test.ts, fewer cases per engine (each is a guest request). */
const FUZZ_SEED = 2027;
// The run's deadline is far above what the answers take: a hang shows as kind `timeout`.
const LIMITS = { timeoutMs: 20_000 };

let raw: RawServer;
let fuzz: RawServer;
let w: NetworkWorld;
let inProcess: Sandbox;
before(async () => {
  raw = await startRawServer(hostileAnswer);
  fuzz = await startRawServer(fuzzAnswerFor(FUZZ_SEED));
  const network = { allow: [`127.0.0.1:${raw.port}`, `127.0.0.1:${fuzz.port}`], timeoutMs: 3_000, maxRequests: 1_000 };
  w = await networkWorld(() => network);
  inProcess = await createSandbox({ javascript: { isolation: "in-process" }, network });
});
after(async () => {
  await inProcess.close();
  await w.close();
  await raw.close();
  await fuzz.close();
});

const jsCode = () => `
const out = {};
for (const p of ${JSON.stringify(PATHS)}) {
  try { const r = await fetch(${JSON.stringify(raw.origin)} + p); out[p] = "reached " + r.status + " " + (await r.text()); }
  catch (e) { out[p] = e.message; }
}
out`;

/** urllib on both Python tiers: an HTTPError whose reason is the host's verdict (native's proxy) is that verdict. */
const urllibCode = () => `
import urllib.request, urllib.error
out = {}
for p in ${JSON.stringify(PATHS)}:
    try:
        r = urllib.request.urlopen(${JSON.stringify(raw.origin)} + p)
        out[p] = "reached %d %s" % (r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        out[p] = e.reason if str(e.reason).startswith("network: ") else "reached %d" % e.code
    except urllib.error.URLError as e:
        out[p] = str(e.reason).split("] ", 1)[-1]
    except Exception as e:
        # a connection cut after the head (http.client's IncompleteRead and the like)
        out[p] = "network: the connection failed (%s)" % type(e).__name__
out`;

const pyfetchCode = () => `
from pyodide.http import pyfetch
out = {}
for p in ${JSON.stringify(PATHS)}:
    try:
        r = await pyfetch(${JSON.stringify(raw.origin)} + p)
        out[p] = "reached %d %s" % (r.status, await r.string())
    except OSError as e:
        out[p] = e.strerror or str(e)
out`;

async function check(sandbox: Sandbox, request: RunRequest): Promise<void> {
  const r = await sandbox.run({ ...request, limits: LIMITS });
  assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
  const got = r.value as Record<string, string>;
  for (const [path, { expect }] of Object.entries(HOSTILE_ANSWERS))
    assert.match(got[path] ?? "missing", hostileOutcome(expect), path);
  await raw.drained();
}

/** The refusal left uncaught ends the run with kind runtime and the verdict, not with its deadline. */
async function uncaught(sandbox: Sandbox, request: RunRequest): Promise<void> {
  const r = await sandbox.run({ ...request, limits: LIMITS });
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.error.kind, "runtime", JSON.stringify(!r.ok && r.error));
  assert.match(!r.ok ? r.error.message : "", /answered 101 Switching Protocols|status 600/);
  await raw.drained();
}

describe("hostile server answers", () => {
  it("quickjs (thread pool): every fetch settles, nothing left open", async () => {
    await check(w.sandbox, { language: "javascript", code: jsCode() });
  });

  it("quickjs (in-process): every fetch settles, nothing left open", async () => {
    await check(inProcess, { language: "javascript", code: jsCode() });
  });

  it("quickjs: an uncaught refusal ends the run at once, on both isolations", async () => {
    const code = `await fetch(${JSON.stringify(raw.origin)} + "/s101-upgrade")`;
    await uncaught(w.sandbox, { language: "javascript", code });
    await uncaught(inProcess, { language: "javascript", code: code.replace("/s101-upgrade", "/s600") });
  });

  it("pyodide: urllib and pyfetch settle every request through the host's bridge", async () => {
    await check(w.sandbox, { language: "python", code: urllibCode() });
    await check(w.sandbox, { language: "python", code: pyfetchCode() });
    await uncaught(w.sandbox, {
      language: "python",
      code: `import urllib.request\nurllib.request.urlopen(${JSON.stringify(raw.origin)} + "/s101-upgrade")`,
    });
  });

  it("native: urllib through the host proxy; the host process survives every answer", async () => {
    await check(w.sandbox, { language: "python", engine: "native", code: urllibCode() });
    await uncaught(w.sandbox, {
      language: "python",
      engine: "native",
      code: `import urllib.request\nurllib.request.urlopen(${JSON.stringify(raw.origin)} + "/s600")`,
    });
  });

  describe("fuzzed answers through every engine", () => {
    // Each run narrows the request timeout, so the answers that hang cost little.
    const narrow = { network: { timeoutMs: 300 } };

    async function fuzzRun(sandbox: Sandbox, request: RunRequest, cases: number): Promise<void> {
      const r = await sandbox.run({ ...request, ...narrow, limits: { timeoutMs: 60_000 } });
      assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.value, { settled: cases, bad: [] });
      await fuzz.drained();
    }

    const js = (cases: number) => `
const bad = [];
let settled = 0;
for (let i = 0; i < ${cases}; i++) {
  try {
    const r = await fetch(${JSON.stringify(fuzz.origin)} + "/f/" + i);
    await r.arrayBuffer();
    if (r.status < 200 || r.status > 599) bad.push(i + ": status " + r.status);
  } catch (e) {
    if (!/^network: /.test(e.message)) bad.push(i + ": " + e.message);
  }
  settled++;
}
({ settled, bad })`;

    // Python: any exception the client raises is an answer; what matters is that each call returns.
    const py = (cases: number) => `
import urllib.request
bad = []
settled = 0
for i in range(${cases}):
    try:
        r = urllib.request.urlopen(${JSON.stringify(fuzz.origin)} + "/f/%d" % i)
        r.read()
        if not 200 <= r.status <= 599:
            bad.append("%d: status %d" % (i, r.status))
    except Exception:
        pass
    settled += 1
{"settled": settled, "bad": bad}`;

    it("quickjs (thread pool and in-process)", async () => {
      await fuzzRun(w.sandbox, { language: "javascript", code: js(150) }, 150);
      await fuzzRun(inProcess, { language: "javascript", code: js(100) }, 100);
    });

    it("pyodide", async () => {
      await fuzzRun(w.sandbox, { language: "python", code: py(150) }, 150);
    });

    it("native", async () => {
      await fuzzRun(w.sandbox, { language: "python", engine: "native", code: py(150) }, 150);
    });
  });
});
