// Threat: guest code multiplies processes or threads until the host cannot schedule anything else.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { cgroupSupport } from "../../src/jail/index.ts";
import { closeNative, runNative } from "../helpers/native.ts";

describe("native", () => {
  after(closeNative);

  it("a fork bomb dies at its first fork", async () => {
    const r = await runNative("import os\nwhile True:\n    os.fork()");
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.equal(!r.ok && r.error.name, "PermissionError");
    assert.match(!r.ok ? r.error.message : "", /Operation not permitted/);
  });

  it(
    "a thread bomb stops at the jail's pids.max",
    { skip: !cgroupSupport().pidsParent && "no cgroup pids controller" },
    async () => {
      const r = await runNative(
        "import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()",
      );
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "runtime");
      assert.equal(!r.ok && r.error.name, "RuntimeError");
      assert.equal(!r.ok && r.error.message, "can't start new thread");
      // the jail (and its 30 sleeping threads) is gone: the next run works
      const next = await runNative("1 + 1");
      assert.deepEqual(next.ok && next.value, 2);
    },
  );
});
