// Bounded admission: capacity holders, a FIFO queue of at most maxQueue, QueueFullError past it, an
// aborted waiter leaves the queue, close() fails waiters.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError, QueueFullError } from "../../src/core/errors.ts";
import { Gate, GateAbortedError } from "../../src/pool/gate.ts";

describe("Gate", () => {
  it("admits up to capacity, queues up to maxQueue in order, refuses the rest", async () => {
    const gate = new Gate("test", 2, 2);
    await gate.acquire();
    assert.equal(gate.tryAcquire(), true);
    const order: number[] = [];
    const a = gate.acquire().then(() => order.push(1));
    const b = gate.acquire().then(() => order.push(2));
    await assert.rejects(gate.acquire(), QueueFullError);
    assert.deepEqual(gate.stats, { held: 2, waiting: 2 });
    gate.release();
    gate.release();
    await Promise.all([a, b]);
    assert.deepEqual(order, [1, 2]);
    gate.release();
    gate.release();
    assert.deepEqual(gate.stats, { held: 0, waiting: 0 });
  });

  it("an aborted waiter leaves the queue; an aborted signal is refused at once", async () => {
    const gate = new Gate("test", 1, 4);
    await gate.acquire();
    const controller = new AbortController();
    const waiting = gate.acquire(controller.signal);
    controller.abort();
    await assert.rejects(waiting, GateAbortedError);
    assert.equal(gate.stats.waiting, 0);
    await assert.rejects(gate.acquire(controller.signal), GateAbortedError);
    gate.release();
    assert.equal(gate.tryAcquire(), true, "the slot went back, not to the aborted waiter");
  });

  it("10,000 at once: capacity + maxQueue admitted, the rest refused at once", async () => {
    const gate = new Gate("test", 16, 100);
    let admitted = 0;
    let refused = 0;
    const all = Array.from({ length: 10_000 }, () =>
      gate.acquire().then(
        () => admitted++,
        (error: unknown) => {
          assert.ok(error instanceof QueueFullError);
          refused++;
        },
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual([admitted, refused, gate.stats.waiting], [16, 10_000 - 116, 100]);
    for (let i = 0; i < 116; i++) gate.release();
    await Promise.all(all);
    assert.equal(admitted, 116);
  });

  it("close() fails waiters and refuses new callers", async () => {
    const gate = new Gate("test", 1, 4);
    await gate.acquire();
    const waiting = gate.acquire();
    gate.close();
    await assert.rejects(waiting, ClosedError);
    await assert.rejects(gate.acquire(), ClosedError);
  });
});
