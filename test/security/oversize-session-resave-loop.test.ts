// Threat: a session whose eviction is refused (its snapshot would be over sessions.maxSnapshotBytes)
// is saved again every idle period, forever: each attempt takes the whole state out of the
// interpreter, compresses it and throws it away (9 attempts in 6 s at idleMs 300), so one idle
// session keeps a core busy and fills the event log. The rule, on both engines: an eviction refused
// for the session's size or state is tried once, said once (`session.evicted` with the error), and not
// again until the session has run again (a snapshot() it is asked for is not a run).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SandboxEvent } from "../../src/core/events.ts";
import { createSandbox, type Language } from "../../src/index.ts";
import type { RunResult } from "../../src/core/types.ts";
import { FULL } from "../helpers/pyodide.ts";

const IDLE_MS = 300;
/** Ten idle periods: a session saved again each period would be refused ten times in it. */
const WINDOW_MS = IDLE_MS * 10;

// Random bytes do not compress: each state is about twice the cap.
const BIG: Record<"python" | "javascript", string> = {
  python: "import os\nbig = os.urandom(2_000_000)\nlen(big)",
  javascript:
    "globalThis.big = new Uint8Array(2_000_000);\nfor (let i = 0; i < big.length; i += 65536) crypto.getRandomValues(big.subarray(i, i + 65536));\nbig.length",
};

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("an oversize session is not saved again every idle period", () => {
  for (const language of ["python", "javascript"] as const satisfies Language[]) {
    it(`${language}: one refused eviction, one event, per run`, { timeout: 120_000 }, async () => {
      const events: SandboxEvent[] = [];
      await using sb = await createSandbox({
        seal: FULL,
        ...(language === "python" ? { python: { pool: 1 } } : {}),
        sessions: { idleMs: IDLE_MS, maxSnapshotBytes: 1 << 20 },
        onEvent: (e) => events.push(e),
      });
      await using s = await sb.session({ language });
      const refusals = () =>
        events.filter((e) => e.type === "session.evicted" && e.session !== undefined && e.error !== undefined);
      assert.equal(value(await s.run({ code: BIG[language] })), 2_000_000);
      await sleep(WINDOW_MS);
      assert.equal(refusals().length, 1, JSON.stringify(refusals()));
      assert.match((refusals()[0] as { error: string }).error, /maxSnapshotBytes/);
      // Asking for a snapshot is not a run: refused (size), and no new eviction attempt follows it.
      await assert.rejects(s.snapshot(), /maxSnapshotBytes/);
      await sleep(WINDOW_MS);
      assert.equal(refusals().length, 1, JSON.stringify(refusals()));
      // It ran again: one more attempt (it may have shrunk), and again only one.
      assert.equal(value(await s.run({ code: "big[0] >= 0" })), true);
      await sleep(WINDOW_MS);
      assert.equal(refusals().length, 2, JSON.stringify(refusals()));
      // It never left: the state is all there.
      assert.equal(value(await s.run({ code: language === "python" ? "len(big)" : "big.length" })), 2_000_000);
    });
  }
});
