// The stored-session record comes back from a store, so its parser is the one place that checks it:
// a record round-trips, and anything else (another format, a cut, an unknown kind or version, a pinned
// record of the wrong length) is refused with its own reason before any byte reaches an engine.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SnapshotRejectedError } from "../../../src/core/errors.ts";
import { decodeRecord, encodeRecord, newId } from "../../../src/adapters/mcp/record.ts";

const reason = (bytes: Uint8Array) => {
  try {
    decodeRecord(bytes);
  } catch (error) {
    assert.ok(error instanceof SnapshotRejectedError);
    return error.reason;
  }
  return "accepted";
};

describe("stored MCP session records", () => {
  it("round-trips a snapshot record and a pinned record", () => {
    const generation = newId();
    const snapshot = Uint8Array.from([1, 2, 3, 250]);
    assert.deepEqual(decodeRecord(encodeRecord({ kind: "snapshot", generation, snapshot })), {
      kind: "snapshot",
      generation,
      snapshot,
    });
    const owner = newId();
    assert.deepEqual(decodeRecord(encodeRecord({ kind: "pinned", generation, owner })), {
      kind: "pinned",
      generation,
      owner,
    });
    assert.notEqual(newId(), newId());
  });

  it("refuses what is not a record, with a reason", () => {
    const good = encodeRecord({ kind: "pinned", generation: newId(), owner: newId() });
    assert.equal(reason(new Uint8Array(0)), "corrupt");
    assert.equal(reason(new TextEncoder().encode("not a record at all, just bytes")), "corrupt");
    assert.equal(reason(good.subarray(0, 21)), "corrupt"); // cut inside the header
    assert.equal(reason(good.subarray(0, good.length - 1)), "corrupt"); // a pinned owner cut short
    const version = Uint8Array.from(good);
    version[4] = 9;
    assert.equal(reason(version), "version");
    const kind = Uint8Array.from(good);
    kind[5] = 7;
    assert.equal(reason(kind), "corrupt");
    // A snapshot record with no snapshot in it.
    const empty = encodeRecord({ kind: "snapshot", generation: newId(), snapshot: new Uint8Array(1) }).subarray(0, 22);
    assert.equal(reason(empty), "corrupt");
  });
});
