// Threat: a session resumed into a sandbox whose limits.memoryMb it is over. Snapshots cross sandboxes
// (another replica, a store shared by differently configured servers); a JavaScript session holding
// 60 MB resumed under `memoryMb: 16` and carried on, past the limit the resumer set. The rule, on every
// engine whose sessions snapshot: a session that holds more than the resumer's memoryMb is refused as
// `size`, with the reason, and nothing of it is kept.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SnapshotRejectedError } from "../../src/core/errors.ts";
import type { RunResult } from "../../src/core/types.ts";
import { createSandbox, type SandboxOptions } from "../../src/index.ts";
import { FULL } from "../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

const CASES: {
  name: string;
  language: "javascript" | "python";
  options: SandboxOptions;
  big: string;
  check: string;
}[] = [
  {
    name: "javascript in worker threads",
    language: "javascript",
    options: { javascript: { isolation: "thread" } },
    big: "globalThis.big = Array.from({ length: 60 }, (_, i) => 'x'.repeat(1 << 20) + i); big.length",
    check: "big.length",
  },
  {
    name: "javascript in process",
    language: "javascript",
    options: { javascript: { isolation: "in-process" } },
    big: "globalThis.big = Array.from({ length: 60 }, (_, i) => 'x'.repeat(1 << 20) + i); big.length",
    check: "big.length",
  },
  {
    name: "python",
    language: "python",
    options: { seal: FULL, python: { pool: 1 } },
    big: "big = [bytes([i]) * (1 << 20) for i in range(60)]\nlen(big)",
    check: "len(big)",
  },
];

describe("a resume is held to the resumer's memoryMb", () => {
  for (const c of CASES) {
    it(`${c.name}: a 60 MB session is refused under memoryMb 16`, { timeout: 300_000 }, async () => {
      await using sb = await createSandbox({ ...c.options, sessions: { key: KEY } });
      await using s = await sb.session({ language: c.language });
      assert.equal(value(await s.run({ code: c.big })), 60);
      const blob = await s.snapshot();
      {
        await using small = await createSandbox({ ...c.options, limits: { memoryMb: 16 }, sessions: { key: KEY } });
        await assert.rejects(small.resume(blob), (error: unknown) => {
          assert.ok(error instanceof SnapshotRejectedError, String(error));
          assert.equal(error.reason, "size", error.message);
          assert.match(error.message, /memoryMb/);
          return true;
        });
        // The resumer serves on.
        assert.equal(value(await small.run({ language: c.language, code: "1 + 1" })), 2);
      }
      // Where its memoryMb allows it, the same bytes resume whole: in a fresh sandbox too (another
      // replica), whose sidecar must grow its memory to the session's first.
      await using again = await sb.resume(blob);
      assert.equal(value(await again.run({ code: c.check })), 60);
      await using fresh = await createSandbox({ ...c.options, sessions: { key: KEY } });
      await using resumed = await fresh.resume(blob);
      assert.equal(value(await resumed.run({ code: c.check })), 60);
    });
  }
});
