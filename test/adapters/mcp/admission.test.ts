// The fair queue and the in-flight caps, in isolation: order and counts, no timing.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Admission, FairQueue } from "../../../src/adapters/mcp/admission.ts";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("FairQueue", () => {
  test("starts waiting calls round-robin across clients, not in arrival order", async () => {
    const queue = new FairQueue(1);
    const started: string[] = [];
    const gate = deferred();
    const runs = [queue.run("block", () => gate.promise)];
    for (let i = 0; i < 4; i++) runs.push(queue.run("busy", () => Promise.resolve(void started.push(`busy${i}`))));
    runs.push(queue.run("quiet", () => Promise.resolve(void started.push("quiet0"))));
    runs.push(queue.run("other", () => Promise.resolve(void started.push("other0"))));
    assert.equal(queue.depth, 6);
    gate.resolve();
    await Promise.all(runs);
    assert.deepEqual(started, ["busy0", "quiet0", "other0", "busy1", "busy2", "busy3"]);
    assert.equal(queue.depth, 0);
    assert.equal(queue.running, 0);
  });

  test("runs at most `capacity` at once", async () => {
    const queue = new FairQueue(2);
    let now = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        queue.run(`c${i % 3}`, async () => {
          peak = Math.max(peak, ++now);
          await new Promise((r) => setImmediate(r));
          now--;
        }),
      ),
    );
    assert.equal(peak, 2);
  });

  test("an abort while waiting leaves the queue without running the call", async () => {
    const queue = new FairQueue(1);
    const gate = deferred();
    const first = queue.run("a", () => gate.promise);
    const abort = new AbortController();
    let ran = false;
    const waiting = queue.run("b", () => Promise.resolve(void (ran = true)), abort.signal);
    abort.abort(new Error("client went away"));
    await assert.rejects(waiting, /client went away/);
    assert.equal(queue.depth, 0);
    gate.resolve();
    await first;
    assert.equal(ran, false);
  });

  test("a failing call frees its slot", async () => {
    const queue = new FairQueue(1);
    await assert.rejects(
      queue.run("a", () => Promise.reject(new Error("boom"))),
      /boom/,
    );
    assert.equal(await queue.run("a", () => Promise.resolve(7)), 7);
  });
});

describe("Admission", () => {
  test("refuses past the per-client cap and the server cap, and release gives places back", () => {
    const admission = new Admission({ maxInflight: 3, maxInflightPerClient: 2 });
    const a1 = admission.admit("a");
    const a2 = admission.admit("a");
    const a3 = admission.admit("a");
    assert.ok("release" in a1 && "release" in a2);
    assert.ok("reason" in a3 && a3.reason === "max-inflight-per-client");
    assert.equal(a3.retryAfterSeconds, 1);
    const b1 = admission.admit("b");
    const b2 = admission.admit("b");
    assert.ok("release" in b1);
    assert.ok("reason" in b2 && b2.reason === "max-inflight");
    a1.release();
    a1.release(); // twice is once
    assert.equal(admission.inflight, 2);
    assert.ok("release" in admission.admit("b"));
    assert.ok("reason" in admission.admit("c"));
  });
});
