// Threat: a session snapshot whose save or load takes more memory than its sidecar has. A record is
// compressed, so a few hundred KB can carry a file of hundreds of MB of zeros: loaded blind it was
// inflated, copied and written into the file system until the sidecar's cgroup killed it (or its
// inflate cap refused it as "corrupt" and retired the sidecar). And a legal 230 MB session
// (`memoryMb: 600`) was killed halfway through its own save, which lost the session. The rule: the
// work is measured before it is done, against what the sidecar's process cap leaves (and the
// resumer's memoryMb); what does not fit is refused as `size` with the reason, the session stays where
// it is, and no sidecar is lost.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";
import { zstdCompressSync, zstdDecompressSync } from "node:zlib";
import { SnapshotRejectedError, SnapshotUnsupportedError } from "../../src/core/errors.ts";
import type { RunResult } from "../../src/core/types.ts";
import { openSnapshot, sealSnapshot } from "../../src/engines/sessions/snapshot.ts";
import { createSandbox } from "../../src/index.ts";
import { FULL } from "../helpers/pyodide.ts";

const KEY = "a test key of at least thirty-two characters";
const MiB = 1024 * 1024;

function value(r: RunResult): unknown {
  assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
  return r.ok ? r.value : undefined;
}

/** This process's children (the sidecars, in their jails), as a sorted list of pids. */
function children(): string {
  const pids = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/);
  return pids.filter(Boolean).sort().join(",");
}

/** A real snapshot's record with a file of `bytes` zeros added: small compressed, huge inflated. */
function withBigFile(snapshot: Uint8Array, bytes: number): Uint8Array {
  const key = new TextEncoder().encode(KEY);
  const { header, state } = openSnapshot(key, snapshot, 1 << 30);
  const raw = zstdDecompressSync(state);
  const length = raw.readUInt32LE(0);
  const h = JSON.parse(raw.subarray(4, 4 + length).toString("utf8")) as {
    nodes: { p: string; k: string; m: number; t: number; n?: number }[];
  };
  h.nodes.push({ p: "/tmp/big", k: "f", m: 0o100644, t: 0, n: bytes });
  let json = Buffer.from(JSON.stringify(h));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32LE(json.length);
  const body = raw.subarray(4 + length);
  const zeros = Buffer.alloc(bytes);
  return sealSnapshot(key, header, zstdCompressSync(Buffer.concat([prefix, json, body, zeros])));
}

describe("a session's save or load never takes more memory than its sidecar has", () => {
  for (const mb of [450, 1024]) {
    it(
      `a small record of a ${mb} MB file is refused as size; the sidecar serves on`,
      { timeout: 300_000 },
      async () => {
        await using sb = await createSandbox({ seal: FULL, python: { pool: 1 }, sessions: { key: KEY } });
        let blob: Uint8Array;
        {
          await using s = await sb.session({ language: "python" });
          value(await s.run({ code: "x = 1" }));
          blob = withBigFile(await s.snapshot(), mb * MiB);
        }
        assert.ok(blob.length < 2 * MiB, `${blob.length} bytes`);
        value(await sb.run({ language: "python", code: "1" }));
        const before = children();
        await assert.rejects(sb.resume(blob), (error: unknown) => {
          assert.ok(error instanceof SnapshotRejectedError, String(error));
          assert.equal(error.reason, "size", error.message);
          assert.match(error.message, /process memory cap|memoryMb/);
          return true;
        });
        // The same sidecar (no new process, none lost) serves the next run.
        assert.equal(value(await sb.run({ language: "python", code: "2" })), 2);
        assert.equal(children(), before);
      },
    );
  }

  it(
    "a legal 230 MB session (memoryMb 600) is snapshotted or refused as size, and kept",
    { timeout: 300_000 },
    async () => {
      await using sb = await createSandbox({
        seal: FULL,
        python: { pool: 1 },
        limits: { memoryMb: 600 },
        sessions: { key: KEY, idleMs: false },
      });
      await using s = await sb.session({ language: "python" });
      const made = "import os\nbig = bytearray(os.urandom(1_000_000)) * 230\nlen(big)";
      assert.equal(value(await s.run({ code: made, limits: { timeoutMs: 120_000 } })), 230_000_000);
      const before = children();
      try {
        await s.snapshot();
      } catch (error) {
        assert.ok(error instanceof SnapshotUnsupportedError, String(error));
        assert.equal(error.reason, "size", error.message);
        assert.match(error.message, /process memory cap/);
      }
      // Either way it is where it was, whole, on the same sidecar.
      assert.equal(value(await s.run({ code: "len(big)" })), 230_000_000);
      assert.equal(children(), before);
    },
  );
});
