// Admission that counts running and parked runs apart: up to running + parked runs admitted, a FIFO
// queue of maxQueue behind them, and a QueueFullError that names the bound that held the queue.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError, QueueFullError } from "../../src/core/errors.ts";
import { ParkingGate } from "../../src/pool/parking-gate.ts";

describe("ParkingGate", () => {
  it("admits running + parked runs, then queues in order, then refuses naming the running bound", async () => {
    const gate = new ParkingGate("pool", { running: 2, parked: 3, maxQueue: 1 });
    for (let i = 0; i < 5; i++) assert.equal(gate.tryAcquire(), true);
    assert.equal(gate.tryAcquire(), false);
    const queued = gate.acquire();
    await assert.rejects(gate.acquire(), (e: unknown) => {
      assert.ok(e instanceof QueueFullError);
      assert.match(e.message, /the running bound is reached \(5 admitted runs .*2 run at once; 0 more are parked\)/);
      return true;
    });
    gate.release();
    await queued;
    assert.deepEqual(gate.stats, { running: 5, parked: 0, waiting: 0 });
  });

  it("counts parked runs apart, and names the parked bound when every parked place is taken", async () => {
    const gate = new ParkingGate("pool", { running: 1, parked: 2, maxQueue: 0 });
    for (let i = 0; i < 3; i++) assert.equal(gate.tryAcquire(), true);
    gate.park(true);
    gate.park(true);
    assert.deepEqual(gate.stats, { running: 1, parked: 2, waiting: 0 });
    await assert.rejects(gate.acquire(), /every parked place is taken \(javascript.maxParked, 2; 1 more/);
    gate.park(false);
    assert.deepEqual(gate.stats, { running: 2, parked: 1, waiting: 0 });
    gate.close();
    await assert.rejects(gate.acquire(), ClosedError);
  });
});
