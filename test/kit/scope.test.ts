// The run's owner of host resources: everything registered is let go once, in reverse order, on
// close; what is registered after the close is let go at once; one disposer's throw stops no other.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RunScope, scoped } from "../../src/kit/scope.ts";

describe("RunScope", () => {
  it("lets go of everything once, last registered first", () => {
    const scope = new RunScope();
    const order: string[] = [];
    scope.defer(() => order.push("a"));
    scope.own({ close: () => order.push("b") });
    scope.close();
    scope.close();
    assert.deepEqual(order, ["b", "a"]);
    assert.equal(scope.closed, true);
  });

  it("a resource registered after the close is let go at once", () => {
    const scope = new RunScope();
    scope.close();
    let closed = false;
    scope.own({ close: () => (closed = true) });
    assert.equal(closed, true);
  });

  it("a disposer that throws stops no other", () => {
    const scope = new RunScope();
    let closed = false;
    scope.defer(() => (closed = true));
    scope.defer(() => {
      throw new Error("boom");
    });
    scope.close();
    assert.equal(closed, true);
  });

  it("scoped closes the scope when the work rejects", async () => {
    let held: RunScope | undefined;
    await assert.rejects(
      scoped((scope) => {
        held = scope;
        return Promise.reject(new Error("host bug"));
      }),
      /host bug/,
    );
    assert.equal(held?.closed, true);
  });
});
