import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InFlight } from "../../src/kit/in-flight.ts";

describe("InFlight", () => {
  it("drain waits for every tracked run, fulfilled or rejected, and track hands the work back", async () => {
    const inFlight = new InFlight();
    const settled: string[] = [];
    let finish!: () => void;
    const slow = inFlight.track(
      new Promise<string>((resolve) => (finish = () => resolve("slow"))).then((v) => (settled.push(v), v)),
    );
    const failed = inFlight.track(Promise.reject(new Error("boom")));
    failed.catch(() => settled.push("failed"));
    let drained = false;
    const draining = inFlight.drain().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false, "a run is still going");
    finish();
    await draining;
    assert.deepEqual(settled.sort(), ["failed", "slow"]);
    assert.equal(await slow, "slow");
  });
});
