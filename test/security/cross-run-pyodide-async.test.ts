// Threat: a stateless run that uses top-level `await` leaves something behind in the event loop — a
// task still pending (one that refuses cancellation), a future resolved later, a callback scheduled
// with call_later/call_at, a replaced event loop policy, the loop's own settings — or a JS reference,
// and a later run (another tenant) meets it. Top-level `await` runs on a pure-Python loop that makes
// no JavaScript state (src/engines/pyodide/sidecar/loop.py), so such a run is reset in place like any
// other (WASM memory and file system restored and proven), and so is every loop a guest can ask for
// (the running loop and the policy's are that loop); one that reaches JavaScript (a JsProxy made
// through ctypes) still changes Pyodide's JS reference table and retires its sidecar.
// Every attack is followed by a run, on the same sidecar where the verdict is "reset", that waits
// long enough for anything scheduled to fire and must see exactly the pristine state.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import { PY_JS_FUNCTION } from "../helpers/pyodide.ts";
import type { RunResult } from "../../src/core/types.ts";
import { STATE_PROBE, warmPyodide } from "../helpers/pyodide-state.ts";

// What an async run sees of the event loop, after waiting for what an earlier run scheduled to fire.
const ASYNC_PROBE = String.raw`
import asyncio, builtins, os, warnings
await asyncio.sleep(0.3)
loop = asyncio.get_running_loop()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    policy = type(asyncio.get_event_loop_policy()).__name__
[sorted(os.listdir("/tmp")), sorted(os.listdir(".")), len(asyncio.all_tasks()), policy, type(loop).__name__,
 loop.get_exception_handler() is None, loop.get_debug(), loop.slow_callback_duration, len(loop._scheduled),
 len(loop._ready), [k for k in dir(builtins) if k.startswith("LEAK")]]
`;

// [what is left behind, the hostile async run, "reset" (same sidecar) or "retire"]
const ATTACKS: [string, string, "reset" | "retire"][] = [
  [
    "a pending task that refuses cancellation and writes later",
    String.raw`import asyncio, builtins
async def later():
    for _ in range(100):
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            pass
    open("/tmp/late", "w").write("x")
    builtins.LEAK_TASK = 1
keep = asyncio.ensure_future(later())
await asyncio.sleep(0)`,
    "reset",
  ],
  [
    "a future resolved later, parked on builtins",
    String.raw`import asyncio, builtins
loop = asyncio.get_running_loop()
fut = loop.create_future()
loop.call_later(0.1, fut.set_result, "secret")
builtins.LEAK_FUTURE = fut
await asyncio.sleep(0)`,
    "reset",
  ],
  [
    "callbacks scheduled with call_later, call_at and call_soon",
    String.raw`import asyncio
loop = asyncio.get_running_loop()
loop.call_later(0.1, lambda: open("/tmp/call_later", "w").write("x"))
loop.call_at(loop.time() + 0.1, lambda: open("call_at.txt", "w").write("x"))
loop.call_soon(lambda: loop.call_later(0.1, lambda: open("/tmp/call_soon", "w").write("x")))
await asyncio.sleep(0)`,
    "reset",
  ],
  [
    "a replaced event loop policy",
    String.raw`import asyncio, warnings
warnings.simplefilter("ignore")
class Policy(asyncio.DefaultEventLoopPolicy):
    pass
asyncio.set_event_loop_policy(Policy())
await asyncio.sleep(0)`,
    "reset",
  ],
  [
    "the running loop's own settings",
    String.raw`import asyncio
loop = asyncio.get_running_loop()
loop.set_exception_handler(lambda loop, context: open("/tmp/handler", "w").write("x"))
loop.set_debug(True)
loop.slow_callback_duration = 0
async def boom():
    raise RuntimeError("unretrieved")
asyncio.ensure_future(boom())
await asyncio.sleep(0.01)`,
    "reset",
  ],
  [
    "a JS reference held by Python (a JsProxy made through ctypes)",
    `import asyncio\n${PY_JS_FUNCTION}keep = fn.constructor\nawait asyncio.sleep(0)`,
    "retire",
  ],
  [
    "a callback on the policy's loop (the sandbox's own: Pyodide's WebLoop, which set JavaScript timers, is no one's)",
    String.raw`import asyncio, warnings
warnings.simplefilter("ignore")
loop = asyncio.get_event_loop_policy().get_event_loop()
loop.call_later(0.1, lambda: open("/tmp/webloop", "w").write("x"))
await asyncio.sleep(0)`,
    "reset",
  ],
];

describe("pyodide: top-level await between runs (one warm sidecar)", () => {
  let engine: PyodideEngine;
  let run: (code: string, more?: { timeoutMs?: number }) => Promise<RunResult>;
  let value: (code: string) => Promise<unknown>;
  let pristine: unknown;
  let pristineAsync: unknown;
  before(async () => {
    ({ engine, run, value } = await warmPyodide());
    pristine = await value(STATE_PROBE);
    pristineAsync = await value(ASYNC_PROBE);
  });
  after(() => engine.close());

  it("an async run is reset in place, not retired", async () => {
    const started = engine.sidecarsStarted;
    for (let i = 0; i < 3; i++)
      assert.equal(await value("import asyncio\nawait asyncio.sleep(0.01)\n'awaited'"), "awaited");
    await engine.pool.whenFull();
    assert.equal(engine.sidecarsStarted, started);
  });

  for (const [what, code, verdict] of ATTACKS) {
    it(`${what}: ${verdict === "reset" ? "gone, same sidecar" : "the sidecar retires"}`, async () => {
      await engine.pool.whenFull();
      const started = engine.sidecarsStarted;
      const r = await run(`${code}\n'hostile'`);
      assert.equal(r.ok && r.value, "hostile", JSON.stringify(!r.ok && r.error));
      assert.deepEqual(await value(ASYNC_PROBE), pristineAsync);
      assert.deepEqual(await value(STATE_PROBE), pristine);
      assert.equal(engine.sidecarsStarted, verdict === "reset" ? started : started + 1);
    });
  }

  it("a run stopped at its deadline while awaiting is kind timeout, and the next run is pristine", async () => {
    const r = await run("import asyncio\nawait asyncio.sleep(60)", { timeoutMs: 500 });
    assert.equal(!r.ok && r.error.kind, "timeout", JSON.stringify(r));
    assert.deepEqual(await value(ASYNC_PROBE), pristineAsync);
    assert.deepEqual(await value(STATE_PROBE), pristine);
  });
});
