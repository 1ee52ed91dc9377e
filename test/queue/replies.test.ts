// How a client hears a reply (src/queue/replies.ts) against a real redis-server on loopback: a reply
// missed while the subscriber was cut off is found when it comes back (not left to the sweep, which
// these tests switch off), and close() ends every wait still pending with ClosedError.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { ClosedError } from "../../src/core/errors.ts";
import { createQueueClient } from "../../src/queue/index.ts";
import { ReplyWaiters } from "../../src/queue/replies.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

const HOUR = 3_600_000;

describe("queue replies: a reply sent while the subscriber was away is not lost", () => {
  it("finds every pending job's stored state once the subscriber reconnects", { timeout: 30_000 }, async () => {
    const sub = new Redis(redis.url, { maxRetriesPerRequest: null });
    const reader = new Redis(redis.url);
    const admin = new Redis(redis.url);
    const waiters = new ReplyWaiters(sub, reader, (id) => `t:${id}`, HOUR); // the sweep never runs
    const controller = new AbortController();
    try {
      await waiters.listen("t:replies");
      // fresh: no first read either, so only the channel or the reconnect's read can deliver these.
      const waits = ["a", "b", "c"].map((id) => waiters.wait(id, controller.signal, true));
      const gone = new Promise((r) => sub.once("close", r));
      const back = new Promise((r) => sub.once("ready", r));
      await admin.call("CLIENT", "KILL", "TYPE", "pubsub");
      await gone;
      // Stored while the subscriber was away, and never published.
      for (const [i, id] of ["a", "b", "c"].entries())
        await admin.hset(`t:${id}`, { finishedOn: "1", returnvalue: JSON.stringify({ n: i }) });
      await back;
      assert.deepEqual(await Promise.all(waits), [{ reply: { n: 0 } }, { reply: { n: 1 } }, { reply: { n: 2 } }]);
    } finally {
      controller.abort(new Error("test over"));
      waiters.close();
      for (const c of [sub, reader, admin]) c.disconnect();
    }
  });
});

describe("queue client: close() leaves nothing hanging", () => {
  it("rejects runs and results still waiting with ClosedError, and every later call", { timeout: 30_000 }, async () => {
    // No worker on this queue: without close() these would wait their whole waitMs (an hour).
    const client = await createQueueClient({ redis: redis.url, queue: "closing", waitMs: HOUR });
    const id = await client.enqueue({ language: "javascript", code: "1" });
    const pending = [client.run({ language: "javascript", code: "2" }), client.result(id), client.result(id)];
    for (const p of pending) p.catch(() => {});
    await new Promise((r) => setTimeout(r, 50)); // let the run's add and the results' look-ups start
    await client.close();
    for (const p of pending) await assert.rejects(p, ClosedError);
    // Closed while the calls are still on their way to Redis: the same error, not the connection's.
    const racing = await createQueueClient({ redis: redis.url, queue: "closing", waitMs: HOUR });
    const cut = [racing.run({ language: "javascript", code: "4" }), racing.result(id)];
    for (const p of cut) p.catch(() => {});
    await racing.close();
    for (const p of cut) await assert.rejects(p, ClosedError);
    await assert.rejects(client.run({ language: "javascript", code: "3" }), ClosedError);
    await assert.rejects(client.enqueue({ language: "javascript", code: "3" }), ClosedError);
    await assert.rejects(client.result(id), ClosedError);
  });
});
