// The light parents (src/engines/native/light.ts): one per slot, no `python.preload`, for stateless
// runs that import only the standard library; every other run, and every session, is a child of the
// stack's parent. Which parent served a run shows in the child: the stack's children hold numpy.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { createEngine, type NativeEngine } from "../../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest, type SandboxOptions } from "../../../src/options/index.ts";

const HAS_STACK = "import sys\n'numpy' in sys.modules";
const engines: NativeEngine[] = [];
after(() => Promise.all(engines.map((e) => e.close())));

async function start(python: SandboxOptions["python"]) {
  const options = resolveOptions({ python: { engine: "native", pool: 1, ...python } });
  const engine = (await createEngine(options)) as NativeEngine;
  engines.push(engine);
  const run = async (code: string) => {
    const r = await engine.run(resolveRequest({ language: "python", engine: "native", code }, options));
    assert.ok(r.ok, JSON.stringify(!r.ok && r.error));
    return r.value;
  };
  return { engine, run };
}

describe("native engine: light parents", () => {
  it("serves standard-library code from the light parent, the stack's imports from the stack's", async () => {
    const { engine, run } = await start({});
    assert.equal(engine.parentPids.length, 2);
    assert.equal(engine.stackParentPids.length, 1);
    assert.equal(await run(HAS_STACK), false);
    assert.equal(await run(`import numpy\n${HAS_STACK}`), true);
    assert.equal(await run("import json, math\njson.dumps(round(math.pi, 2))"), "3.14");
    // The light parent holds the standard library's everyday modules: its children import them free.
    assert.deepEqual(await run("import sys\n[m in sys.modules for m in ('statistics', 'datetime', 'numpy')]"), [
      true,
      true,
      false,
    ]);
    // A run on one parent leaves the other as it was.
    const parents = engine.parentPids;
    for (let i = 0; i < 4; i++) await run(i % 2 ? "1 + 1" : "import pandas\nlen(pandas.DataFrame({'a': [1, 2]}))");
    assert.deepEqual(engine.parentPids, parents);
  });

  it("is off with lightParent false, and needless with no preload: one parent per slot", async () => {
    const off = await start({ lightParent: false });
    assert.equal(off.engine.parentPids.length, 1);
    assert.equal(off.engine.routesLight({ code: "print(1)", files: new Map() }), false);
    assert.equal(await off.run(HAS_STACK), true);
    const bare = await start({ preload: [] });
    assert.equal(bare.engine.parentPids.length, 1);
    assert.equal(await bare.run(HAS_STACK), false);
  });

  it("a lost light parent is replaced; meanwhile its runs go to the stack's parent", async () => {
    const { engine, run } = await start({});
    const [light] = engine.light!.pids;
    process.kill(light!, "SIGKILL");
    for (let i = 0; i < 250 && engine.light!.pids.includes(light!); i++) await sleep(20);
    // Once its end is seen, the run is served: by the stack's parent until the replacement is up.
    assert.equal(await run("6 * 7"), 42);
    for (let i = 0; i < 250 && !(engine.light!.pids.length === 1 && engine.light!.pids[0] !== light); i++)
      await sleep(20);
    assert.equal(engine.light!.pids.length, 1);
    assert.notEqual(engine.light!.pids[0], light);
    assert.equal(await run(HAS_STACK), false);
  });
});
