// The Redis session store against a real redis-server: blobs round-trip byte for byte, and the lock
// holds across connections (two stores stand for two replicas): one holder at a time, a stale holder
// whose lock expired cannot extend or release the new holder's lock.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { RedisSessionStore } from "../../src/stores/redis.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let redis: RedisServer;
let a: RedisSessionStore;
let b: RedisSessionStore;
before(async () => {
  redis = await startRedis();
  a = new RedisSessionStore({ redis: redis.url });
  b = new RedisSessionStore({ redis: redis.url });
});
after(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
});

describe("RedisSessionStore", () => {
  it("stores, replaces and deletes blobs byte for byte, seen from another replica", async () => {
    assert.equal(await b.get("s1"), undefined);
    const bytes = new Uint8Array(70_000).map((_, i) => (i * 31) & 255);
    await a.put("s1", bytes);
    assert.deepEqual(await b.get("s1"), bytes);
    await a.put("s1", new Uint8Array([0, 255, 0]));
    assert.deepEqual([...((await b.get("s1")) ?? [])], [0, 255, 0]);
    await b.delete("s1");
    await b.delete("s1");
    assert.equal(await a.get("s1"), undefined);
  });

  it("one session never runs in two places: a second replica cannot take a held lock", async () => {
    const held = await a.lock("s2", 10_000);
    assert.ok(held);
    assert.equal(await b.lock("s2", 10_000), undefined);
    assert.equal(await held.extend(10_000), true);
    await held.release();
    await held.release();
    const next = await b.lock("s2", 10_000);
    assert.ok(next);
    await next.release();
  });

  it("a stale holder whose lock expired can neither extend nor release the new holder's lock", async () => {
    const stale = await a.lock("s3", 50);
    assert.ok(stale);
    await new Promise((r) => setTimeout(r, 150));
    const fresh = await b.lock("s3", 10_000);
    assert.ok(fresh, "the expired lock is free again");
    assert.equal(await stale.extend(10_000), false);
    await stale.release();
    assert.equal(await a.lock("s3", 10_000), undefined, "the stale release did not free the new holder's lock");
    assert.equal(await fresh.extend(10_000), true);
    await fresh.release();
  });

  it("refuses ids that could reach another key space", async () => {
    await assert.rejects(a.get("x blob"), /id: must be/);
    await assert.rejects(a.lock("", 10), /id: must be/);
  });
});
