// Python on both tiers keeps CPython's own hints ("Did you mean: 'total'?") in the message and the
// traceback, never advises what the box blocks (installing packages at run time), and has what agent
// code reaches for: locale on native (C.UTF-8), zoneinfo on both.
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { closeNative, runNative } from "../../../helpers/native.ts";
import { closePyodide, runPy } from "../../../helpers/pyodide.ts";
import type { RunResult } from "../../../../src/core/types.ts";

const TIERS: [string, (code: string) => Promise<RunResult>][] = [
  ["native", (code) => runNative(code)],
  ["pyodide", (code) => runPy(code)],
];

for (const [tier, run] of TIERS) {
  describe(`python hints on ${tier}`, () => {
    after(() => (tier === "native" ? closeNative() : closePyodide()));

    const failure = async (code: string) => {
      const r = await run(code);
      assert.equal(r.ok, false, JSON.stringify(r));
      return r.ok ? { message: "", stack: "" } : { message: r.error.message, stack: r.error.stack ?? "" };
    };

    it("a misspelt name: Did you mean, in the message and the traceback", async () => {
      const e = await failure("total = 3\nprint(totl + 1)");
      assert.equal(e.message, "name 'totl' is not defined. Did you mean: 'total'?");
      assert.match(e.stack, /NameError: name 'totl' is not defined\. Did you mean: 'total'\?\n$/);
      assert.match(e.stack, /File "<code>", line 2/);
    });

    it("a misspelt attribute and a misspelt builtin", async () => {
      const a = await failure("class Cart:\n    total = 1\nCart().totl");
      assert.equal(a.message, "'Cart' object has no attribute 'totl'. Did you mean: 'total'?");
      const b = await failure("lenn([1])");
      assert.equal(b.message, "name 'lenn' is not defined. Did you mean: 'len'?");
    });

    it("a plain error keeps its message", async () => {
      const e = await failure("raise ValueError('bad value')");
      assert.equal(e.message, "bad value");
    });

    it("zoneinfo has the tz database", async () => {
      const r = await run(
        "from zoneinfo import ZoneInfo\nfrom datetime import datetime\nd = datetime(2024, 7, 1, 12, tzinfo=ZoneInfo('UTC')).astimezone(ZoneInfo('America/New_York'))\n[d.isoformat(), d.tzname()]",
      );
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.ok && r.value, ["2024-07-01T08:00:00-04:00", "EDT"]);
    });

    it("the tz database is read-only", async () => {
      const r = await run(
        "try:\n    open('/usr/share/zoneinfo/UTC', 'ab').write(b'x')\n    out = 'WROTE'\nexcept OSError as e:\n    out = type(e).__name__\nout",
      );
      // Refused in the guest (OSError), or by the sidecar's permission model (the run ends `denied`).
      if (r.ok) assert.notEqual(r.value, "WROTE");
      else assert.equal(r.error.kind, "denied", JSON.stringify(r.error));
    });

    it("a missing package is reported without advice the box cannot follow", async () => {
      const e = await failure("import not_a_real_package_xyz");
      assert.doesNotMatch(e.message + e.stack, /loadPackage|micropip/);
    });
  });
}

describe("python locale on native", () => {
  after(() => closeNative());
  it('locale.setlocale(LC_ALL, "C.UTF-8") works (the compiled locales are bound read-only)', async () => {
    const r = await runNative(
      "import locale\nlocale.setlocale(locale.LC_ALL, 'C.UTF-8')\n[locale.setlocale(locale.LC_ALL), locale.getpreferredencoding(False), 'é'.upper()]",
    );
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, ["C.UTF-8", "UTF-8", "É"]);
  });
});
