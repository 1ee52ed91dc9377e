// Threat: a stateless run leaves bytes in the WASM linear memory — in memory that was free at the
// checkpoint, in memory it grew past the checkpoint's size — that a later run reads back raw (ctypes
// reads any address). The reset compares every 64 KiB block against the checkpoint and copies back or
// zeroes the ones that differ (src/engines/pyodide/sidecar/checkpoint.ts); the next run, served by the
// same sidecar, must find none of what the attacker wrote anywhere in the memory.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { PyodideEngine } from "../../src/engines/pyodide/index.ts";
import type { RunResult } from "../../src/core/types.ts";
import { warmPyodide } from "../helpers/pyodide-state.ts";

// The marker is built at run time (XOR 1), so the code's own constants do not contain it.
const MARKER = 'bytes(b ^ 1 for b in b"MDGU,CX,@UU@BJDS")';
// 768 copies, one per 64 KiB, through 48 MiB: past the checkpoint's ~38 MB, so the memory grows.
const PLANT = `big = bytearray(48 << 20)\nfor off in range(40, len(big), 1 << 16):\n    big[off:off + 16] = ${MARKER}\nlen(big)`;

describe("pyodide: raw memory between runs (one warm sidecar)", () => {
  let engine: PyodideEngine;
  let run: (code: string) => Promise<RunResult>;
  before(async () => {
    ({ engine, run } = await warmPyodide({ memoryMb: 256 }));
  });
  after(() => engine.close());

  it("bytes a run left in free or grown memory are not in the next run's memory", async () => {
    const planted = await run(PLANT);
    assert.equal(planted.ok, true, JSON.stringify(!planted.ok && planted.error));
    await engine.pool.whenFull();
    const started = engine.sidecarsStarted;
    const size = planted.stats.peakMemoryBytes ?? 0;
    assert.ok(size > 48 << 20, "the plant grew the memory");
    // Scans the whole memory for the marker (ctypes makes this run retire its sidecar afterwards: it
    // grows the function table; the read happens first). The only copies left are the scan's own key
    // (and at most a freed temporary of it); 768 would mean the plant survived.
    const scan = await run(
      `import ctypes\nkey = ${MARKER}\nsum(ctypes.string_at(a, 1 << 16).count(key) for a in range(0, ${size}, 1 << 16))`,
    );
    assert.equal(scan.ok, true, JSON.stringify(!scan.ok && scan.error));
    assert.equal(engine.sidecarsStarted, started, "the scan ran in the sidecar the plant used");
    assert.ok(
      scan.ok && (scan.value as number) <= 3,
      `found the marker ${JSON.stringify(scan.ok && scan.value)} times`,
    );
  });
});
