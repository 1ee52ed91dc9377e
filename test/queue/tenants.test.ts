// The tenant gate's Lua against a real redis-server: two gates stand for two workers. A cap admits
// exactly N across both; a slot whose worker died lapses after the TTL; a rate admits `max` per window
// and says how long to wait; a refusal by one counter consumes neither.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Redis } from "ioredis";
import { TenantGate } from "../../src/queue/tenants.ts";
import { startRedis, type RedisServer } from "../helpers/redis.ts";

let server: RedisServer;
let r1: Redis;
let r2: Redis;
before(async () => {
  server = await startRedis();
  r1 = new Redis(server.url);
  r2 = new Redis(server.url);
});
after(async () => {
  r1?.disconnect();
  r2?.disconnect();
  await server?.stop();
});

describe("tenant gate", () => {
  it("a cap admits exactly N across workers, and a released slot is free again", async () => {
    const a = new TenantGate(r1, { t: { concurrency: 2 } }, "test1", 10_000);
    const b = new TenantGate(r2, { t: { concurrency: 2 } }, "test1", 10_000);
    assert.equal((await a.admit("t", "j1")).admitted, true);
    assert.equal((await b.admit("t", "j2")).admitted, true);
    const refused = await b.admit("t", "j3");
    assert.deepEqual(refused.admitted ? undefined : refused.reason, "concurrency");
    assert.equal((await a.admit("t", "j1")).admitted, true, "a job that holds a slot (rerun) is admitted again");
    await a.release("t", "j1");
    assert.equal((await b.admit("t", "j3")).admitted, true);
    assert.equal((await b.admit("other", "x")).admitted, true, "tenants without a rule are not limited");
  });

  it("a dead worker's slot lapses after the TTL", async () => {
    const dead = new TenantGate(r1, { t: { concurrency: 1 } }, "test2", 100);
    const live = new TenantGate(r2, { t: { concurrency: 1 } }, "test2", 100);
    assert.equal((await dead.admit("t", "held")).admitted, true);
    assert.equal((await live.admit("t", "next")).admitted, false);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await live.admit("t", "next")).admitted, true);
    assert.equal(await dead.extend("t", "held"), false, "the lapsed slot cannot be extended");
  });

  it("a rate admits max per window, says how long to wait, and a cap refusal spends no rate", async () => {
    const gate = new TenantGate(r1, { t: { concurrency: 1, rate: { max: 2, durationMs: 5_000 } } }, "test3", 10_000);
    assert.equal((await gate.admit("t", "a")).admitted, true);
    assert.equal((await gate.admit("t", "b")).admitted, false, "capped");
    await gate.release("t", "a");
    assert.equal((await gate.admit("t", "b")).admitted, true, "the capped refusal did not spend the rate");
    await gate.release("t", "b");
    const refused = await gate.admit("t", "c");
    assert.equal(refused.admitted, false);
    assert.ok(!refused.admitted && refused.reason === "rate" && refused.retryMs > 0 && refused.retryMs <= 5_000);
  });

  it("refuses bad limits by name", () => {
    assert.throws(() => new TenantGate(r1, { t: { concurrency: 0 } }, "p", 1), /tenants\.t\.concurrency/);
    assert.throws(() => new TenantGate(r1, { t: { rate: { max: 1, durationMs: 0 } } }, "p", 1), /rate\.durationMs/);
  });
});
