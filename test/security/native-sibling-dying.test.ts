// Threat: run N on the native tier reaches run N+1 through the moments the two overlap. A warm
// parent answers a run as soon as the child's own fence is through and kills it then; the next run
// may start in the child made ahead while the killed one is still being torn down (its address
// space unmapped, its memory given back: milliseconds, more for a large one). Two sets of pipes
// (src/engines/native/parent.py) keep a dying child's last bytes off the next run's output: a thread
// may still write between the child's own fence and its end, and those bytes must go nowhere. On
// both parents a stateless run may have (src/engines/native/route.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createEngine, type NativeEngine } from "../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import type { RunResult } from "../../src/core/types.ts";
import { NATIVE_PARENTS } from "../helpers/native.ts";

const options = resolveOptions({ python: { engine: "native", pool: 1 } });
let engine: NativeEngine;
const value = (r: RunResult) => {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
};

for (const { name, light, route } of NATIVE_PARENTS)
  describe(`native warm parent (${name}): a child being torn down while the next one runs`, () => {
    const run = (code: string) => {
      const request = resolveRequest(
        { language: "python", engine: "native", code: route(code), limits: { timeoutMs: 30_000 } },
        options,
      );
      assert.equal(engine.routesLight(request), light, "the run goes to the parent under test");
      return engine.run(request);
    };
    before(async () => {
      engine = (await createEngine(options)) as NativeEngine;
    });
    after(() => engine.close());

    it("writes nothing into the next runs' output, display items or result", async () => {
      const parent = engine.parentPids;
      for (let round = 0; round < 5; round++) {
        // Threads that never stop writing on every pipe the child has, up to the kill (its own result
        // is whatever the junk made of it).
        await run(`
import os, threading
junk = b'{"kind": "result", "ok": true, "value": "FORGED"}\\n' + b'LEAK ' * 200 + b'\\n'
def spam(fd):
    while True:
        try:
            os.write(fd, junk)
        except OSError:
            pass
for fd in (1, 2, 4):
    for _ in range(2):
        threading.Thread(target=spam, args=(fd,), daemon=True).start()
'spamming'`);
        // The next three runs back to back: one on the other pipe set (while the spammer dies), and
        // the ones after it on the spammer's set.
        for (let i = 0; i < 3; i++) {
          const r = await run(`print('run ${round}.${i}')\n${round * 10 + i}`);
          assert.equal(value(r), round * 10 + i);
          assert.equal(r.stdout, `run ${round}.${i}\n`);
          assert.equal(r.stderr, "");
          assert.deepEqual(r.results, []);
        }
      }
      assert.deepEqual(engine.parentPids, parent);
    });
  });
