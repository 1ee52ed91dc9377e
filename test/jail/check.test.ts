// A seal layer asked for and unavailable is an error naming it; a layer turned off is not used.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import { SealUnavailableError } from "../../src/errors.ts";
import { checkSeal, doctor, spawnJailed } from "../../src/jail/index.ts";
import { RESOLVED_DEFAULT_SEAL } from "../../src/options.ts";
import { collect, pythonSpec, TEST_SEAL } from "./helpers.ts";

const MISSING = "/nonexistent/wasmcell-test/bwrap";
const isSeal = (layer: string, text: RegExp) => (e: unknown) =>
  e instanceof SealUnavailableError && e.layer === layer && e.code === "SEAL_UNAVAILABLE" && text.test(e.message);

describe("checkSeal", () => {
  it("passes on this machine with every layer on", async () => {
    const plan = await checkSeal(RESOLVED_DEFAULT_SEAL);
    assert.equal(plan.bubblewrap, true);
    assert.equal(plan.seccomp, "enforce");
  });

  it("bubblewrap asked for but not installed: SealUnavailableError naming bubblewrap", async () => {
    await assert.rejects(
      checkSeal(RESOLVED_DEFAULT_SEAL, { bwrap: MISSING }),
      isSeal("bubblewrap", /\/nonexistent\/wasmcell-test\/bwrap is not installed/),
    );
    await assert.rejects(
      spawnJailed(pythonSpec("print(1)", { tools: { bwrap: MISSING } })),
      isSeal("bubblewrap", /not installed/),
    );
  });

  it("seccomp without bubblewrap cannot be installed: an error, not a quiet run without the filter", async () => {
    await assert.rejects(
      checkSeal({ ...RESOLVED_DEFAULT_SEAL, bubblewrap: false }),
      isSeal("seccomp", /set seal\.seccomp to false too/),
    );
  });

  it("a layer turned off is simply not used: no bwrap needed, the program runs on the host side", async () => {
    const seal = { ...TEST_SEAL, bubblewrap: false, seccomp: false as const };
    const plan = await checkSeal(seal, { bwrap: MISSING });
    assert.equal(plan.bubblewrap, false);
    const res = await collect(
      await spawnJailed(
        pythonSpec("import socket, os; print(socket.gethostname(), os.path.exists('/etc/passwd'))", {
          seal,
          tools: { bwrap: MISSING },
        }),
      ),
    );
    assert.equal(res.stderr, "");
    assert.equal(res.stdout, `${hostname()} True\n`);
  });

  it("the uid drop needs setpriv when the host is root", { skip: process.getuid?.() !== 0 && "not root" }, async () => {
    await assert.rejects(
      checkSeal(RESOLVED_DEFAULT_SEAL, { setpriv: "/nonexistent/setpriv" }),
      isSeal("dropPrivileges", /\/nonexistent\/setpriv/),
    );
    await checkSeal({ ...RESOLVED_DEFAULT_SEAL, dropPrivileges: false }, { setpriv: "/nonexistent/setpriv" });
  });
});

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
