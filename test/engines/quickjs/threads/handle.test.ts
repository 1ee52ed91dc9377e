// One worker thread as the host holds it (handle.ts): after a run an idle worker lingers asleep on its
// doorbell, then goes back to its event loop; a message posted while it lingers wakes it and is
// answered, and a lingering worker can be terminated. Order, not time, is asserted: the workers here
// linger for a minute (LONG), so only the doorbell can end it within a test's time; the host watches the
// worker's own state word with a bounded busy wait (the worker is another thread, it moves meanwhile).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { LINGER_MS, WorkerHandle } from "../../../../src/engines/quickjs/threads/handle.ts";
import {
  IDLE,
  LINGERING,
  type WireRequest,
  type WorkerMessage,
} from "../../../../src/engines/quickjs/threads/protocol.ts";
import { DEFAULT_LIMITS } from "../../../../src/options/index.ts";

const wire = (code: string): WireRequest => ({
  language: "javascript",
  code,
  files: new Map(),
  limits: DEFAULT_LIMITS,
  hostNames: [],
  output: false,
  display: false,
  abort: undefined,
  claim: new Int32Array(new SharedArrayBuffer(4)),
  demote: false,
});

const LONG = 60_000;

/** A started worker and the messages it sends, by kind. */
async function started(
  lingerMs = LONG,
): Promise<{ handle: WorkerHandle; next: (t: WorkerMessage["t"]) => Promise<WorkerMessage>; exited: Promise<string> }> {
  const waiting = new Map<string, (m: WorkerMessage) => void>();
  let exit!: (why: string) => void;
  const exited = new Promise<string>((resolve) => (exit = resolve));
  const handle = new WorkerHandle(
    undefined,
    (_, m) => waiting.get(m.t)?.(m),
    (_, why) => exit(why),
    lingerMs,
  );
  await handle.ready;
  const next = (t: WorkerMessage["t"]) => new Promise<WorkerMessage>((resolve) => waiting.set(t, resolve));
  return { handle, next, exited };
}

/** Busy-waits (bounded) until the worker's state word is `state`; true if it got there. */
function until(handle: WorkerHandle, state: number, ms = 10_000): boolean {
  const end = performance.now() + ms;
  while (performance.now() < end) if (handle.idleState === state) return true;
  return false;
}

describe("a worker between runs", { timeout: 30_000 }, () => {
  it("lingers on its doorbell after a run, and with nothing posted goes back to its event loop", async () => {
    for (const lingerMs of [LONG, LINGER_MS]) {
      const { handle, next } = await started(lingerMs);
      try {
        assert.equal(handle.idleState, IDLE, "a fresh worker waits in its event loop");
        const done = next("done");
        handle.postRun({ t: "run", id: 1, req: wire("1 + 1") });
        await done;
        if (lingerMs === LONG) assert.ok(until(handle, LINGERING), "it lingers after the run");
        else assert.ok(until(handle, IDLE), "the linger ran out by itself");
      } finally {
        handle.terminate();
      }
    }
  });

  it("answers a message posted while it lingers, and runs the next run in a fresh context", async () => {
    const { handle, next } = await started();
    try {
      const first = next("done");
      handle.postRun({ t: "run", id: 1, req: wire("globalThis.leak = 1; 1") });
      await first;
      assert.ok(until(handle, LINGERING));
      const second = next("done");
      handle.postRun({ t: "run", id: 2, req: wire("typeof globalThis.leak") });
      const m = await second;
      assert.equal(m.t === "done" && (m.result as { value?: unknown }).value, "undefined");
      assert.ok(until(handle, LINGERING));
      const opened = next("session-opened");
      handle.post({ t: "session-open", session: 7 });
      assert.deepEqual(await opened, { t: "session-opened", session: 7, error: undefined });
    } finally {
      handle.terminate();
    }
  });

  it("is ended by terminate() while it lingers", async () => {
    const { handle, next, exited } = await started();
    const done = next("done");
    handle.postRun({ t: "run", id: 1, req: wire("1") });
    await done;
    assert.ok(until(handle, LINGERING));
    handle.terminate();
    assert.match(await exited, /exited/);
    assert.equal(handle.dead, true);
  });
});
