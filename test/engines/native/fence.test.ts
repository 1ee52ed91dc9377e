// The fence that ends one child's bytes on the pipes a warm parent's children share.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Fence, fenceFor, FENCE_BYTES } from "../../../src/engines/native/fence.ts";

const token = "0123456789abcdef0123456789abcdef";
const other = "ffffffffffffffffffffffffffffffff";

function collect(): { fence: Fence; text: () => string } {
  const fence = new Fence();
  const out: Buffer[] = [];
  fence.sink = (c) => out.push(c);
  return { fence, text: () => Buffer.concat(out).toString("latin1") };
}

describe("Fence", () => {
  it("passes bytes through and ends at the fence, even split across chunks", async () => {
    const { fence, text } = collect();
    const data = Buffer.concat([Buffer.from("hello "), fenceFor(token)]);
    for (let i = 0; i < data.length; i += 3) fence.push(data.subarray(i, i + 3));
    await fence.until(token);
    assert.equal(text(), "hello ");
  });

  it("holds back at most one fence's length while the token is unknown", () => {
    const { fence, text } = collect();
    fence.push(Buffer.from("abc"));
    assert.equal(text(), "abc");
    fence.push(fenceFor(token).subarray(0, 10));
    assert.equal(text(), "abc");
    fence.push(Buffer.from("more"));
    assert.equal(text().length, 3 + 10 + 4);
    fence.push(fenceFor(token));
    assert.ok(text().length <= 3 + 10 + 4 + FENCE_BYTES);
  });

  it("a forged fence with another token is the child's data, and the real one still ends it", async () => {
    const { fence, text } = collect();
    fence.push(Buffer.concat([Buffer.from("a"), fenceFor(other), Buffer.from("b")]));
    fence.push(fenceFor(other));
    const done = fence.until(token);
    fence.push(fenceFor(token));
    await done;
    assert.equal(text(), `a${fenceFor(other).toString("latin1")}b${fenceFor(other).toString("latin1")}`);
  });

  it("awaited first (a session turn), the fence ends the turn and what follows waits for the next sink", async () => {
    const { fence, text } = collect();
    const done = fence.until(token);
    fence.push(Buffer.concat([Buffer.from("x"), fenceFor(token), Buffer.from("next")]));
    await done;
    assert.equal(text(), "x");
    const later: Buffer[] = [];
    fence.sink = (c) => later.push(c);
    fence.push(Buffer.from("!"));
    assert.equal(Buffer.concat(later).toString(), "next!");
  });

  it("refuses a token that is not 32 hex digits", () => {
    assert.throws(() => fenceFor("nope"), RangeError);
  });
});
