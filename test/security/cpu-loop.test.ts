// Threat: guest code never ends (a loop, a sleep, a catastrophic regex in C, a guest that ignores
// the soft interrupt) and holds a CPU or a slot forever.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closeNative, runNative } from "../helpers/native.ts";
import { closePyodide, runPy } from "../helpers/pyodide.ts";

describe("native", () => {
  after(closeNative);
  const cases: [string, string, string][] = [
    ["a Python loop", "while True:\n    pass", "KeyboardInterrupt"],
    ["a sleep", "import time\ntime.sleep(60)", "KeyboardInterrupt"],
    // sre checks for signals while it backtracks, so the soft interrupt reaches it
    ["a catastrophic regex", "import re\nre.match(r'(a*)*b', 'a' * 64)", "KeyboardInterrupt"],
    // the soft interrupt is caught and ignored: only the SIGKILL at the deadline ends it
    [
      "a loop that swallows the interrupt",
      "while True:\n    try:\n        sum(range(10**6))\n    except KeyboardInterrupt:\n        pass",
      "TimeoutError",
    ],
    // one long call in C sees no signal until it returns
    ["a long C call", "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)", "TimeoutError"],
    [
      "a loop that ignores SIGALRM",
      "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass",
      "TimeoutError",
    ],
  ];
  for (const [what, code, name] of cases) {
    it(`${what} ends as kind timeout (${name})`, async () => {
      const r = await runNative(code, { timeoutMs: 2000 });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "timeout");
      assert.equal(!r.ok && r.error.name, name);
    });
  }
});

describe("pyodide", () => {
  after(closePyodide);
  // [what, code, name]: KeyboardInterrupt = the in-sidecar interrupt ended it and the sidecar lived;
  // TimeoutError = the host killed the sidecar at the deadline + grace (stuck in C, or interrupt ignored).
  const cases: [string, string, string][] = [
    ["a Python loop", "while True:\n    pass", "KeyboardInterrupt"],
    // The guest replaces the SIGINT handler, so the in-sidecar interrupt can never end it: only the
    // host's kill at the deadline + grace does. (A `try/except KeyboardInterrupt` loop is not a
    // swallow: an interrupt that lands on the loop's own bytecodes, outside the try, ends it.)
    [
      "a loop that swallows the interrupt",
      "import signal\nsignal.signal(signal.SIGINT, lambda *a: None)\nwhile True:\n    sum(range(10**6))",
      "TimeoutError",
    ],
    ["time.sleep past the deadline", "import time\ntime.sleep(60)", "TimeoutError"],
    // sre checks for signals while it backtracks, so the in-sidecar interrupt reaches it
    ["a catastrophic regex", "import re\nre.match(r'(a*)*b', 'a' * 64)", "KeyboardInterrupt"],
    // one long call in C polls nothing: only the kill ends it
    ["one long C call", "sum(range(10**12))", "TimeoutError"],
  ];
  for (const [what, code, name] of cases) {
    it(`${what} ends as kind timeout (${name}); the next run is served`, async () => {
      const r = await runPy(code, { timeoutMs: 500 });
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "timeout");
      assert.equal(!r.ok && r.error.name, name);
      const next = await runPy("'next'");
      assert.equal(next.ok && next.value, "next");
    });
  }
});
