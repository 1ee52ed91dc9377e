import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Deadline, GRACE } from "../../src/kit/deadline.ts";

describe("Deadline", () => {
  it("is the budget's end on one clock, and says what is left", () => {
    const d = new Deadline(100, 1_000);
    assert.equal(d.at, 1_100);
    assert.equal(d.left(1_040), 60);
    assert.equal(d.left(1_200), 0, "never negative");
    assert.equal(d.passed(0, 1_099), false);
    assert.equal(d.passed(0, 1_100), true);
    assert.equal(d.passed(GRACE.threadKillMs, 1_300), false, "a rung with a grace acts later");
    assert.equal(d.passed(GRACE.threadKillMs, 1_350), true);
  });

  it("says the deadline on the wall clock for a rung in another process, early by a margin", () => {
    const d = new Deadline(100, 1_000);
    const before = Date.now();
    const at = d.wallClockAt(20, 1_040);
    const after = Date.now();
    // 60 ms were left at 1_040; 20 early leaves 40 from the moment it was asked.
    assert.ok(at >= before + 40 && at <= after + 40, `${at} not within [${before + 40}, ${after + 40}]`);
  });

  it("refuses a budget that is not a non-negative number", () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) assert.throws(() => new Deadline(bad), RangeError);
  });

  it("gives a poll loop a predicate that turns true at the deadline", () => {
    const d = new Deadline(0);
    assert.equal(d.interrupter()(), true);
    assert.equal(new Deadline(60_000).interrupter()(), false);
  });

  it("has one grace per rung, none of them shared by name", () => {
    assert.deepEqual(Object.keys(GRACE).sort(), [
      "nativeSoftEarlyMs",
      "nativeSoftEarlyShare",
      "networkMs",
      "sidecarKillMs",
      "threadKillMs",
      "threadStarvedMaxMs",
    ]);
    assert.ok(Object.isFrozen(GRACE));
  });
});
