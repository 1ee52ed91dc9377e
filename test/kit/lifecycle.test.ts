import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ClosedError } from "../../src/core/errors.ts";
import { EngineLifecycle } from "../../src/kit/lifecycle.ts";
import { Serial } from "../../src/kit/serial.ts";

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("EngineLifecycle", () => {
  it("close: stops admission, drains runs, closes sessions, then frees (in that order)", async () => {
    const life = new EngineLifecycle("test engine");
    const order: string[] = [];
    const run = deferred();
    const work = life.run(async () => {
      await run.promise;
      order.push("run");
    });
    life.addSession({ close: () => Promise.resolve(void order.push("session")) });
    const closing = life.close(() => Promise.resolve(void order.push("freed")));
    assert.equal(life.open, false);
    assert.throws(() => life.admit(), ClosedError);
    await assert.rejects(
      life.run(() => Promise.resolve(1)),
      /the test engine is closed/,
    );
    run.resolve();
    await Promise.all([work, closing]);
    assert.deepEqual(order, ["run", "session", "freed"]);
    assert.equal(
      life.close(() => Promise.reject(new Error("closed twice"))),
      closing,
      "a second close waits for the first",
    );
  });

  it("destroy during a close still destroys (a drain can wait on a stuck run)", async () => {
    const life = new EngineLifecycle("e");
    const stuck = deferred();
    void life.run(() => stuck.promise);
    let destroyed = false;
    void life.close(() => Promise.resolve());
    await life.destroy(() => Promise.resolve(void (destroyed = true)));
    assert.equal(destroyed, true);
    stuck.resolve();
  });

  it("a removed session is not closed again", async () => {
    const life = new EngineLifecycle("e");
    let closes = 0;
    const remove = life.addSession({ close: () => Promise.resolve(void closes++) });
    remove();
    await life.destroy(() => Promise.resolve());
    assert.equal(closes, 0);
    assert.equal(life.sessions.size, 0);
  });
});

describe("Serial", () => {
  it("runs steps one at a time, in order, a failure not stopping the next", async () => {
    const serial = new Serial();
    const seen: number[] = [];
    let inside = 0;
    const step = (n: number, fail = false) =>
      serial.run(async () => {
        assert.equal(inside++, 0, "one at a time");
        await new Promise((r) => setTimeout(r, 2));
        seen.push(n);
        inside--;
        if (fail) throw new Error(`step ${n}`);
        return n;
      });
    const results = await Promise.allSettled([step(1), step(2, true), step(3)]);
    assert.deepEqual(seen, [1, 2, 3]);
    assert.deepEqual(
      results.map((r) => r.status),
      ["fulfilled", "rejected", "fulfilled"],
    );
    await serial.idle();
  });
});

describe("EngineLifecycle, seen from inside the closing work", () => {
  it("the engine is already closed when onDestroy and onClose run", async () => {
    const life = new EngineLifecycle("e");
    let seenOpen: boolean | undefined;
    await life.destroy(() => Promise.resolve(void (seenOpen = life.open)));
    assert.equal(seenOpen, false, "a replacement started from onDestroy would outlive the engine");
    const other = new EngineLifecycle("e");
    await other.close(() => Promise.resolve(void (seenOpen = other.open)));
    assert.equal(seenOpen, false);
  });
});
