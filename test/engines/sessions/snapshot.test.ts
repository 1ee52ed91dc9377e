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
    // Magic and length bytes are framing (corrupt), the key id says "key"; everything else (salt,
    // tag, ciphertext) fails the AEAD tag. (The format byte says "version": its own test, below.)
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

  it("another format version is refused as a version, format 1 (not encrypted) by name", () => {
    for (const format of [1, 3]) {
      const blob = Buffer.from(sealSnapshot(KEY, HEADER, STATE));
      blob[6] = format;
      // A format 1 blob as the previous wasmcell sealed it: HMAC-SHA256 over every byte but its tag.
      if (format === 1)
        createHmac("sha256", KEY).update(blob.subarray(0, 20)).update(blob.subarray(52)).digest().copy(blob, 20);
      try {
        openSnapshot(KEY, blob, MAX);
        assert.fail("not refused");
      } catch (error) {
        assert.ok(error instanceof SnapshotRejectedError, String(error));
        assert.equal(error.reason, "version");
        assert.match(error.message, new RegExp(`format ${format}\\b.*reads format 2`));
      }
    }
  });

  it("the header and state are encrypted: neither is in the sealed bytes, each snapshot its own salt", () => {
    const secret = Buffer.from("a secret the session held: 0123456789abcdef");
    const state = Buffer.concat([STATE, secret, STATE]);
    const a = Buffer.from(sealSnapshot(KEY, HEADER, state));
    const b = Buffer.from(sealSnapshot(KEY, HEADER, state));
    for (const blob of [a, b]) {
      assert.equal(blob.indexOf(secret), -1);
      assert.equal(blob.indexOf(Buffer.from(HEADER.lock === "abc" ? '"engineVersion"' : "")), -1);
    }
    // Same key, same plaintext: different bytes (salt, so key and nonce), both open.
    assert.notDeepEqual(a.subarray(20), b.subarray(20));
    assert.deepEqual(Buffer.from(openSnapshot(KEY, a, MAX).state), state);
    assert.deepEqual(Buffer.from(openSnapshot(KEY, b, MAX).state), state);
  });
});
