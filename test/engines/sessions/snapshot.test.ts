// The snapshot framing: every way a returned snapshot can be wrong is refused before its state is
// looked at, each with its own reason.
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { describe, it } from "node:test";
import { SnapshotRejectedError } from "../../../src/core/errors.ts";
import {
  checkMadeFor,
  openSnapshot,
  sealSnapshot,
  type SnapshotHeader,
} from "../../../src/engines/sessions/snapshot.ts";

const KEY = new Uint8Array(32).fill(7);
const OTHER = new Uint8Array(32).fill(8);
const HEADER: SnapshotHeader = {
  engine: "pyodide",
  language: "python",
  engineVersion: "0.29.0",
  lock: "abc",
  limits: { timeoutMs: 1000 },
  createdAt: 1,
};
const STATE = new Uint8Array(1000).map((_, i) => i % 251);
const MAX = 1 << 20;

function reason(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof SnapshotRejectedError, String(error));
    assert.equal(error.code, "SNAPSHOT_REJECTED");
    return error.reason;
  }
  assert.fail("not refused");
}

describe("session snapshot framing", () => {
  it("what is sealed opens, header and state intact", () => {
    const { header, state } = openSnapshot(KEY, sealSnapshot(KEY, HEADER, STATE), MAX, HEADER);
    assert.deepEqual(header, HEADER);
    assert.deepEqual(Buffer.from(state), Buffer.from(STATE));
  });

  it("a changed byte anywhere is refused: authentication (or framing where the byte is framing)", () => {
    const blob = sealSnapshot(KEY, HEADER, STATE);
    const seen = new Set<string>();
    for (let i = 0; i < blob.length; i += 7) {
      const bad = Uint8Array.from(blob);
      bad[i]! ^= 0x01;
      seen.add(reason(() => openSnapshot(KEY, bad, MAX, HEADER)));
    }
    // Magic and length bytes are framing (corrupt), the key id says "key"; everything else is the tag.
    assert.deepEqual([...seen].sort(), ["authentication", "corrupt", "key"]);
    const body = Uint8Array.from(blob);
    body[body.length - 1]! ^= 0x80;
    assert.equal(
      reason(() => openSnapshot(KEY, body, MAX, HEADER)),
      "authentication",
    );
  });

  it("a truncated or padded blob is corrupt, before its tag is checked", () => {
    const blob = sealSnapshot(KEY, HEADER, STATE);
    assert.equal(
      reason(() => openSnapshot(KEY, blob.subarray(0, blob.length - 1), MAX)),
      "corrupt",
    );
    assert.equal(
      reason(() => openSnapshot(KEY, blob.subarray(0, 10), MAX)),
      "corrupt",
    );
    assert.equal(
      reason(() => openSnapshot(KEY, Buffer.concat([blob, Buffer.alloc(1)]), MAX)),
      "corrupt",
    );
    assert.equal(
      reason(() => openSnapshot(KEY, "not bytes", MAX)),
      "corrupt",
    );
    assert.equal(
      reason(() => openSnapshot(KEY, new Uint8Array(100), MAX)),
      "corrupt",
    );
  });

  it("a blob made under another key is refused as such", () => {
    assert.equal(
      reason(() => openSnapshot(KEY, sealSnapshot(OTHER, HEADER, STATE), MAX)),
      "key",
    );
  });

  it("over the size cap: refused before anything is read", () => {
    assert.equal(
      reason(() => openSnapshot(KEY, sealSnapshot(KEY, HEADER, STATE), 500)),
      "size",
    );
  });

  it("another engine, engine version or lock: each its own reason", () => {
    const { header } = openSnapshot(KEY, sealSnapshot(KEY, HEADER, STATE), MAX);
    assert.equal(
      reason(() => checkMadeFor(header, { ...HEADER, engine: "quickjs" })),
      "engine",
    );
    assert.equal(
      reason(() => checkMadeFor(header, { ...HEADER, engineVersion: "0.30.0" })),
      "engine",
    );
    assert.equal(
      reason(() => checkMadeFor(header, { ...HEADER, lock: "def" })),
      "lock",
    );
  });

  it("another format version, authenticated, is refused as a version", () => {
    const blob = Buffer.from(sealSnapshot(KEY, HEADER, STATE));
    blob[6] = 2;
    // Re-tag it as a future wasmcell would: the version check, not the tag, must refuse it.
    const tag = createHmac("sha256", KEY).update(blob.subarray(0, 20)).update(blob.subarray(52)).digest();
    tag.copy(blob, 20);
    assert.equal(
      reason(() => openSnapshot(KEY, blob, MAX)),
      "version",
    );
  });
});
