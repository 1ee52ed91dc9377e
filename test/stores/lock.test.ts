// Holding a session's lock for a run: a second holder waits while the first holds it and gets it once
// it is released; past the wait it is refused as busy (nothing run); a lease renewed while held does
// not lapse; and a holder whose lease lapsed (its process stalled) learns it at confirm(), so it does
// not save over whoever took the lock next. A cancelled call stops waiting at once and holds nothing. The Redis store's own lock is tested in redis.test.ts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SessionBusyError } from "../../src/core/errors.ts";
import { holdSessionLock } from "../../src/stores/lock.ts";
import { MemorySessionStore } from "../../src/stores/memory.ts";

/** The in-memory store, counting lock calls and calling back when one is granted. */
class HookedStore extends MemorySessionStore {
  asked = 0;
  onGranted: (() => void) | undefined;
  override async lock(id: string, leaseMs: number) {
    this.asked++;
    const lock = await super.lock(id, leaseMs);
    if (lock) this.onGranted?.();
    return lock;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("holdSessionLock", () => {
  it("waits for the holder, then takes the lock; past the wait it is busy", async () => {
    const store = new MemorySessionStore();
    const first = await holdSessionLock(store, "s", { leaseMs: 5_000, waitMs: 10 });
    await assert.rejects(
      holdSessionLock(store, "s", { leaseMs: 5_000, waitMs: 50 }),
      (e: unknown) => e instanceof SessionBusyError && e.reason === "busy" && e.code === "SESSION_BUSY",
    );
    const waiting = holdSessionLock(store, "s", { leaseMs: 5_000, waitMs: 5_000 });
    await sleep(30);
    await first.release();
    const second = await waiting;
    assert.equal(await second.confirm(), true);
    await second.release();
    await second.release(); // idempotent
  });

  it("renews the lease while held; a lapsed lease is reported by confirm()", async () => {
    const store = new MemorySessionStore();
    const held = await holdSessionLock(store, "renewed", { leaseMs: 300, waitMs: 10 });
    await sleep(1_000); // three leases: renewed every 100 ms, so never free
    assert.equal(await store.lock("renewed", 300), undefined);
    assert.equal(await held.confirm(), true);
    await held.release();
    // A lease that lapses: the holder's timer cannot run while its thread is blocked.
    const stalled = await holdSessionLock(store, "stalled", { leaseMs: 30, waitMs: 10 });
    const until = Date.now() + 80;
    while (Date.now() < until); // the event loop stalls past the lease
    const taker = await store.lock("stalled", 5_000);
    assert.ok(taker, "the lapsed lock is free for the next caller");
    assert.equal(await stalled.confirm(), false);
    await stalled.release();
    assert.equal(await store.lock("stalled", 10), undefined, "release did not free the taker's lock");
    await taker.release();
  });

  it("a cancelled wait stops at once, runs nothing and leaves no lock behind", async () => {
    const store = new MemorySessionStore();
    const holder = await holdSessionLock(store, "s", { leaseMs: 5_000, waitMs: 10 });
    const controller = new AbortController();
    const waiting = holdSessionLock(store, "s", { leaseMs: 5_000, waitMs: 60_000 }, controller.signal);
    await sleep(30);
    controller.abort(new Error("client cancelled"));
    await assert.rejects(
      waiting,
      (e: unknown) =>
        e instanceof SessionBusyError && e.reason === "aborted" && (e.cause as Error).message === "client cancelled",
    );
    await holder.release();
    const next = await store.lock("s", 5_000);
    assert.ok(next, "the cancelled waiter took no lock");
    await next.release();
    // Already aborted: the store is not even asked.
    const hooked = new HookedStore();
    await assert.rejects(holdSessionLock(hooked, "s", { leaseMs: 5_000, waitMs: 10 }, AbortSignal.abort()));
    assert.equal(hooked.asked, 0);
    // A lock that is granted as the signal fires is given straight back.
    const racing = new AbortController();
    hooked.onGranted = () => racing.abort();
    await assert.rejects(holdSessionLock(hooked, "s", { leaseMs: 5_000, waitMs: 10 }, racing.signal));
    assert.equal(hooked.asked, 1);
    hooked.onGranted = undefined;
    const free = await hooked.lock("s", 5_000);
    assert.ok(free, "the lock granted to the cancelled call was released");
    await free.release();
  });
});
