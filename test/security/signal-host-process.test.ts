// Threat: guest code kills or signals processes outside the sandbox.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { startVictim } from "../helpers/host.ts";
import { closeNative, PROBES, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("native", () => {
  let victim: ReturnType<typeof startVictim>;
  before(() => (victim = startVictim()));
  after(async () => {
    victim.stop();
    await closeNative();
  });

  it("kill of a host pid, of pid 1 and of the process group is refused; the host process lives", async () => {
    const pid = victim.pid;
    const r = await runNative(`${PROBES}
import signal
{
  "kill_victim": probe(lambda: os.kill(${pid}, signal.SIGKILL)),
  "kill_init": probe(lambda: os.kill(1, signal.SIGKILL)),
  "killpg": probe(lambda: os.killpg(0, signal.SIGKILL)),
  "kill_all": raw(62, -1, 9),
  "tkill": raw(200, ${pid}, 9),
  "tgkill_victim": raw(234, ${pid}, ${pid}, 9),
  "pidfd_open": raw(434, ${pid}, 0),
}`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, {
      kill_victim: "PermissionError:EPERM",
      kill_init: "PermissionError:EPERM",
      killpg: "PermissionError:EPERM",
      kill_all: "EPERM",
      tkill: "EPERM",
      // tgkill is allowed (raise() needs it) but the host pid does not exist in the jail's pid namespace
      tgkill_victim: "ESRCH",
      pidfd_open: "EPERM",
    });
    assert.equal(victim.alive(), true);
    assert.doesNotThrow(() => process.kill(pid, 0));
  });
});

describe("pyodide", () => {
  let victim: ReturnType<typeof startVictim>;
  before(() => (victim = startVictim()));
  after(async () => {
    victim.stop();
    await closePyodide();
  });

  it("os.kill of a host pid is refused; the host process lives", async () => {
    const r = await runPy(`
import os, signal
try:
    os.kill(${victim.pid}, signal.SIGKILL)
    outcome = "ALLOWED"
except BaseException as e:
    outcome = type(e).__name__
outcome`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.notEqual(r.ok && r.value, "ALLOWED");
    assert.equal(victim.alive(), true);
  });
});
