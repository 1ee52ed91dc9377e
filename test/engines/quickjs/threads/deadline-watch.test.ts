// The thread pool's deadline watch as a pure verdict: each case is what the host sees at one moment,
// and what it must do then. The times are on the epoch clock the worker's stamps use.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { verdict, type WatchState } from "../../../../src/engines/quickjs/threads/deadline-watch.ts";
import { Deadline, GRACE } from "../../../../src/kit/deadline.ts";

const BEGUN = 1_000_000;
const TIMEOUT = 100;
const AT = BEGUN + TIMEOUT;

function state(over: Partial<WatchState>): WatchState {
  return {
    now: BEGUN,
    deadline: new Deadline(TIMEOUT, BEGUN),
    timeoutMs: TIMEOUT,
    heldByOther: false,
    lastBeat: BEGUN,
    cpuNs: undefined,
    cpuAtDeadline: undefined,
    beatMs: 20,
    ...over,
  };
}

describe("the thread pool's deadline verdict", () => {
  it("a run still queued in its worker is looked at again after its whole budget", () => {
    assert.deepEqual(verdict(state({ deadline: undefined })), { sleep: TIMEOUT });
  });

  it("before the deadline it sleeps until just past it", () => {
    assert.deepEqual(verdict(state({ now: BEGUN + 40 })), { sleep: 61 });
  });

  it("past the deadline, within the grace: the thread's priority is lifted so its interrupt is reached", () => {
    assert.deepEqual(verdict(state({ now: AT + 10 })), { sleep: GRACE.threadKillMs - 10 + 1, lift: true });
  });

  it("past the deadline and the grace, silent and not starved: the worker is killed", () => {
    assert.equal(verdict(state({ now: AT + GRACE.threadKillMs })), "kill");
  });

  it("past the deadline and the grace while another run's guest code holds the thread: it waits, never killed for it", () => {
    for (const now of [AT + GRACE.threadKillMs, AT + GRACE.threadStarvedMaxMs * 10])
      assert.deepEqual(verdict(state({ now, heldByOther: true })), { sleep: 20 });
  });

  it("a thread whose event loop turned after the deadline gets one more grace, not more", () => {
    const beat = AT + 5;
    assert.deepEqual(verdict(state({ now: AT + GRACE.threadKillMs + 1, lastBeat: beat })), { sleep: 20, lift: true });
    assert.equal(verdict(state({ now: AT + 2 * GRACE.threadKillMs, lastBeat: beat })), "kill");
  });

  it("a thread the machine starved of CPU waits, up to GRACE.threadStarvedMaxMs past the deadline", () => {
    const cpu = { cpuAtDeadline: 5e9, cpuNs: 5e9 + 1e6 }; // 1 ms of CPU since the deadline
    assert.deepEqual(verdict(state({ now: AT + GRACE.threadKillMs + 50, ...cpu })), { sleep: 20, lift: true });
    assert.equal(verdict(state({ now: AT + GRACE.threadStarvedMaxMs, ...cpu })), "kill");
    // One that burned the CPU and still did not answer is stuck in a builtin, not starved.
    const burned = { cpuAtDeadline: 5e9, cpuNs: 5e9 + GRACE.threadKillMs * 1e6 };
    assert.equal(verdict(state({ now: AT + GRACE.threadKillMs + 50, ...burned })), "kill");
  });
});
