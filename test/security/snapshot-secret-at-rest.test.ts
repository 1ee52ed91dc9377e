// Threat: a session's snapshot read where it is stored. A snapshot leaves the sandbox (a disk store, a
// shared Redis, a file the CLI writes), and its state is whatever the guest held: a token it was given,
// a file it wrote. Authenticated but not encrypted, its header and state were in the clear and the
// state only compressed: anyone who could read the store inflated it and read the secret. The rule: a
// snapshot is encrypted at rest (AES-256-GCM under a key derived from sessions.key), so its bytes give
// nothing of the state to a reader without the key, on every engine whose sessions snapshot.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { inflateRawSync, zstdDecompressSync } from "node:zlib";
import type { RunResult } from "../../src/core/types.ts";
import { createSandbox } from "../../src/index.ts";
import { FULL } from "../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

/** Everything a reader without the key can get out of the bytes: the bytes, and every inflate of them. */
function readable(blob: Uint8Array): Buffer[] {
  const bytes = Buffer.from(blob);
  const out = [bytes];
  // A raw-deflate stream (JavaScript states) starting anywhere in the first bytes (the clear header).
  for (let at = 0; at < 512 && at < bytes.length; at++) {
    try {
      out.push(inflateRawSync(bytes.subarray(at), { maxOutputLength: 256 << 20 }));
    } catch {
      // not a stream from here
    }
  }
  // A zstd frame (Python records) wherever its magic number is.
  const magic = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
  for (let at = bytes.indexOf(magic); at >= 0; at = bytes.indexOf(magic, at + 1)) {
    try {
      out.push(zstdDecompressSync(bytes.subarray(at), { maxOutputLength: 1 << 30 }));
    } catch {
      // not a frame from here
    }
  }
  return out;
}

const CASES = [
  {
    language: "javascript" as const,
    options: {},
    hold: (secret: string) => `globalThis.token = ${JSON.stringify(secret)}; token.length`,
    check: "token",
  },
  {
    language: "python" as const,
    options: { seal: FULL, python: { pool: 1 } },
    hold: (secret: string) => `token = ${JSON.stringify(secret)}\nopen('/tmp/token', 'w').write(token)`,
    check: "open('/tmp/token').read()",
  },
];

describe("a snapshot's state is not readable where it is stored", () => {
  for (const c of CASES) {
    it(`${c.language}: a secret the session held is in no form of its stored bytes`, { timeout: 180_000 }, async () => {
      const secret = `token-${randomBytes(16).toString("hex")}`;
      await using sb = await createSandbox({ ...c.options, sessions: { key: KEY } });
      await using s = await sb.session({ language: c.language });
      value(await s.run({ code: c.hold(secret) }));
      const blob = await s.snapshot();
      for (const form of readable(blob)) assert.equal(form.indexOf(secret), -1, "the secret is readable");
      // With the key it is all there.
      await using resumed = await sb.resume(blob);
      assert.equal(value(await resumed.run({ code: c.check })), secret);
    });
  }
});
