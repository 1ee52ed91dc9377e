// Threat: a native session's child (alive across turns) and a stateless child alive at the same time
// reach each other: read or plant files, signal the other's process. A session takes a warm parent of
// its own out of the pool (src/engines/native/sessions.ts), so the two never share a parent, a jail,
// a mount or a pid namespace; each is pid 1 of its own namespace besides, with kill() denied.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";

let sandbox: Sandbox;

describe("native: a session child and a stateless child alive together", () => {
  before(async () => {
    sandbox = await createSandbox({ python: { engine: "native", pool: 1 } });
  });
  after(() => sandbox.close());

  it("cannot reach each other's files or process", async () => {
    const session = await sandbox.session({ language: "python", engine: "native" });
    const planted = await session.run({
      code: "import os\nopen('session-secret.txt','w').write('s')\nopen('/tmp/session-tmp','w').write('s')\n[os.getpid(), sorted(os.listdir('/tmp'))]",
    });
    assert.deepEqual(planted.ok && planted.value, [1, ["session-tmp", "work"]]);
    // The stateless run, while the session's child lives: a long one, so both are alive at once.
    const stateless = sandbox.run({
      language: "python",
      engine: "native",
      code: `
import os, signal, time
seen = [sorted(os.listdir('.')), sorted(os.listdir('/tmp'))]
killed = []
for pid in range(0, 64):
    try:
        os.kill(pid, signal.SIGKILL); killed.append(pid)
    except OSError:
        pass
open('stateless-secret.txt', 'w').write('t')
time.sleep(1.0)
[seen, killed]`,
      limits: { timeoutMs: 20_000 },
    });
    const during = await session.run({ code: "import os\n[sorted(os.listdir('.')), sorted(os.listdir('/tmp'))]" });
    const r = await stateless;
    assert.deepEqual(r.ok && r.value, [[[], ["work"]], []], JSON.stringify(r));
    assert.deepEqual(during.ok && during.value, [["session-secret.txt"], ["session-tmp", "work"]]);
    const after = await session.run({ code: "import os\nsorted(os.listdir('.'))" });
    assert.deepEqual(after.ok && after.value, ["session-secret.txt"], "the session lives on, untouched");
    await session.close();
  });
});
