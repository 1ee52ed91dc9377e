// Threat: a run on the native tier exhausts its memory to take the warm parent (and every later run)
// down with it. Each child of the parent has a cgroup pair of its own nested in the jail's
// (src/engines/native/warm.ts): its memory is counted for it alone, so the OOM killer picks inside
// that pair, the child dies with kind `memory`, and the same parent serves the next run. A pair is
// reused for a later child once proven empty: its peak and its OOM count restart, so a later run is
// never blamed for what the killed one held. On both
// parents a stateless run may have (src/engines/native/route.ts).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createEngine, type NativeEngine } from "../../src/engines/native/index.ts";
import { resolveOptions, resolveRequest } from "../../src/options/index.ts";
import { NATIVE_PARENTS } from "../helpers/native.ts";

const options = resolveOptions({ python: { engine: "native", pool: 1 } });
let engine: NativeEngine;
const run = (code: string, memoryMb = 128) => {
  const request = resolveRequest(
    { language: "python", engine: "native", code, limits: { timeoutMs: 30_000, memoryMb } },
    options,
  );
  assert.equal(engine.routesLight(request), !/numpy|pandas/.test(code), "the run goes to the parent under test");
  return engine.run(request);
};

for (const { name, light, route } of NATIVE_PARENTS)
  describe(`native warm parent (${name}): a child that exhausts its memory`, () => {
    before(async () => {
      engine = (await createEngine(options)) as NativeEngine;
    });
    after(() => engine.close());

    it("is killed alone (kind memory), and the same parent serves the next run", async () => {
      const parent = engine.parentPids;
      // Touches every page (a bytearray of zeros would be lazily mapped): resident memory, not address space.
      const r = await run(
        light
          ? "blocks = []\nwhile True:\n    blocks.append(b'x' * (16 << 20))"
          : "import numpy as np\nblocks = []\nwhile True:\n    blocks.append(np.ones(16 * 1024 * 1024 // 8))",
      );
      assert.equal(!r.ok && r.error.kind, "memory", JSON.stringify(!r.ok && r.error));
      const next = await run(
        light ? "len(list(range(10)))" : "import pandas as pd\nlen(pd.DataFrame({'a': range(10)}))",
      );
      assert.equal(next.ok && next.value, 10, JSON.stringify(next));
      // The runs after it, on both pipe sets (so one reuses the cgroup pair the killed child had):
      // none is blamed for its memory, its peak or its kill.
      for (let i = 0; i < 3; i++) {
        const later = await run(route("sum(range(100))"));
        assert.equal(later.ok && later.value, 4950, JSON.stringify(later));
        assert.ok((later.stats.peakMemoryBytes ?? 0) < 64 * 1024 * 1024, `peak ${later.stats.peakMemoryBytes}`);
      }
      assert.deepEqual(engine.parentPids, parent);
    });

    it("cannot push the parent out of its own memory by filling its scratch", async () => {
      const parent = engine.parentPids;
      const r = await run(
        route("chunk = b'x' * (8 << 20)\nwith open('/tmp/fill', 'wb') as f:\n    while True:\n        f.write(chunk)"),
        64,
      );
      assert.equal(r.ok, false);
      const next = await run(route("1 + 1"));
      assert.equal(next.ok && next.value, 2);
      assert.deepEqual(engine.parentPids, parent);
    });
  });
