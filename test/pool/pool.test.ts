// The generic warm pool: members are plain objects here because the pool only counts, queues and
// replaces them; the Pyodide tests exercise it with real sidecars.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError, QueueFullError } from "../../src/core/errors.ts";
import { WarmPool } from "../../src/pool/pool.ts";

interface Member {
  id: number;
  alive: boolean;
}

function makePool(size: number, maxQueue: number, failStarts = 0, standby = 0) {
  let created = 0;
  let starting = 0;
  const concurrency: number[] = [];
  const destroyed: number[] = [];
  const members: Member[] = [];
  let failures = failStarts;
  const pool = new WarmPool<Member>({
    name: "test pool",
    size,
    standby,
    maxQueue,
    create: async () => {
      concurrency.push(++starting);
      await new Promise((r) => setTimeout(r, 5));
      starting--;
      if (failures > 0) {
        failures--;
        throw new Error("start failed");
      }
      const member = { id: ++created, alive: true };
      members.push(member);
      return member;
    },
    destroy: (m) => {
      m.alive = false;
      destroyed.push(m.id);
      return Promise.resolve();
    },
    isAlive: (m) => m.alive,
  });
  return { pool, destroyed, created: () => created, concurrency, members };
}

describe("WarmPool", () => {
  it("prewarm fills the pool; acquire hands out idle members without starting new ones", async () => {
    const { pool, created } = makePool(2, 4);
    await pool.prewarm();
    await pool.whenFull();
    assert.equal(created(), 2);
    const a = await pool.acquire();
    const b = await pool.acquire();
    assert.notEqual(a.id, b.id);
    assert.equal(created(), 2);
    pool.release(a, true);
    pool.release(b, true);
    await pool.close();
  });

  it("a cold pool starts one member alone, then the rest together once it is ready", async () => {
    const { pool, created, concurrency } = makePool(3, 4);
    await pool.prewarm();
    assert.equal(created(), 1, "prewarm resolves with the first member up");
    await pool.whenFull();
    assert.deepEqual(concurrency, [1, 1, 2]);
    await pool.close();
  });

  it("a member released as not reusable is destroyed and replaced in the background", async () => {
    const { pool, destroyed, created } = makePool(1, 4);
    await pool.prewarm();
    const a = await pool.acquire();
    pool.release(a, false);
    assert.deepEqual(destroyed, [a.id]);
    await pool.whenFull();
    assert.equal(created(), 2);
    const b = await pool.acquire();
    assert.notEqual(b.id, a.id);
    pool.release(b, true);
    await pool.close();
  });

  it("waiters queue in order up to maxQueue; one more is QueueFullError", async () => {
    const { pool } = makePool(1, 2);
    await pool.prewarm();
    const held = await pool.acquire();
    const order: number[] = [];
    const w1 = pool.acquire().then((m) => (order.push(1), m));
    const w2 = pool.acquire().then((m) => (order.push(2), m));
    await assert.rejects(pool.acquire(), QueueFullError);
    pool.release(held, true);
    const m1 = await w1;
    pool.release(m1, true);
    const m2 = await w2;
    pool.release(m2, true);
    assert.deepEqual(order, [1, 2]);
    await pool.close();
  });

  it("a dead idle member is skipped and replaced", async () => {
    const { pool, created } = makePool(1, 2);
    await pool.prewarm();
    const a = await pool.acquire();
    pool.release(a, true);
    a.alive = false; // died while idle
    const b = await pool.acquire();
    assert.notEqual(b.id, a.id);
    assert.equal(created(), 2);
    pool.release(b, true);
    await pool.close();
  });

  it("a failed start rejects the waiters with its error; the next acquire tries again", async () => {
    const { pool } = makePool(1, 2, 1);
    await assert.rejects(pool.acquire(), /start failed/);
    const m = await pool.acquire();
    assert.equal(m.alive, true);
    pool.release(m, true);
    await pool.close();
  });

  it("an aborted waiter leaves the queue", async () => {
    const { pool } = makePool(1, 1);
    await pool.prewarm();
    const held = await pool.acquire();
    const controller = new AbortController();
    const waiting = pool.acquire(controller.signal);
    controller.abort();
    await assert.rejects(waiting);
    const next = pool.acquire();
    pool.release(held, true);
    pool.release(await next, true);
    await pool.close();
  });

  it("close fails waiters and refuses new acquires", async () => {
    const { pool } = makePool(1, 2);
    await pool.prewarm();
    const held = await pool.acquire();
    const waiting = pool.acquire();
    await pool.close();
    await assert.rejects(waiting, ClosedError);
    await assert.rejects(pool.acquire(), ClosedError);
    pool.release(held, true);
  });

  it("standby members take no runs, start after the serving ones, and step in when one is lost", async () => {
    const { pool, created, concurrency, destroyed, members } = makePool(2, 4, 0, 1);
    const standbyUp = async () => {
      while (pool.standby < 1) await new Promise((r) => setTimeout(r, 1));
    };
    await pool.prewarm();
    await pool.whenFull();
    await standbyUp();
    assert.equal(created(), 3);
    assert.equal(concurrency[0], 1, "the first serving member started alone");
    const a = await pool.acquire();
    const b = await pool.acquire();
    // Both serving members busy: the standby is not handed out; a third caller waits.
    let handed = false;
    const waiting = pool.acquire().then((m) => ((handed = true), m));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(handed, false);
    assert.deepEqual([pool.stats, pool.standby], [{ idle: 0, busy: 2, starting: 0, waiting: 1 }, 1]);
    // A serving member is lost: the standby serves the waiter at once, a new standby starts.
    pool.release(a, false);
    const third = await waiting;
    assert.equal(third.id, 3);
    assert.deepEqual(destroyed, [a.id]);
    assert.equal(pool.stats.starting, 1);
    await standbyUp();
    // A standby that died while it waited is dropped, never handed out; a new start replaces it.
    members[3]!.alive = false;
    pool.release(third, false);
    assert.deepEqual(destroyed, [a.id, 3, 4]);
    assert.deepEqual([pool.stats, pool.standby], [{ idle: 0, busy: 1, starting: 1, waiting: 0 }, 0]);
    pool.release(b, true);
    await pool.whenFull();
    await standbyUp();
    assert.equal(created(), 6);
    await pool.close();
    assert.ok(destroyed.includes(6), "close destroys the standby too");
  });
});
