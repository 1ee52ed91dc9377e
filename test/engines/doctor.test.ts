// `wasmcell doctor`: every seal layer (asked of the jail) and every engine (asked of the engine), with a
// reason for what is missing.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { doctor } from "../../src/engines/doctor.ts";

const MISSING = "/nonexistent/wasmcell-test/bwrap";

describe("doctor", () => {
  it("reports every layer and every engine, with a reason for what is missing", async () => {
    const report = await doctor({ tools: { bwrap: MISSING } });
    assert.deepEqual(
      report.layers.map((l) => l.layer),
      [
        "userNamespaces",
        "bubblewrap",
        "seccomp",
        "uidDrop",
        "cgroupMemory",
        "cgroupPids",
        "rlimits",
        "nodePermissions",
      ],
    );
    const bwrap = report.layers.find((l) => l.layer === "bubblewrap")!;
    assert.equal(bwrap.available, false);
    assert.match(bwrap.detail, /not installed/);
    assert.deepEqual(
      report.engines.map((e) => e.engine),
      ["quickjs", "pyodide", "native"],
    );
    const native = report.engines.find((e) => e.engine === "native")!;
    assert.equal(native.available, false);
    assert.match(native.detail, /bubblewrap/);
  });

  it("on this machine: every layer available (cgroups only as root), the native engine ready with numpy/pandas/matplotlib", async () => {
    const report = await doctor();
    const root = process.getuid?.() === 0;
    for (const l of report.layers) {
      if (!root && l.layer.startsWith("cgroup")) assert.match(l.detail, /needs root/);
      else assert.equal(l.available, true, `${l.layer}: ${l.detail}`);
    }
    const native = report.engines.find((e) => e.engine === "native")!;
    assert.equal(native.available, true, native.detail);
    assert.match(native.detail, /numpy [\d.]+, pandas [\d.]+, matplotlib [\d.]+/);
    assert.match(report.layers.find((l) => l.layer === "nodePermissions")!.detail, /network denied unless --allow-net/);
  });
});
