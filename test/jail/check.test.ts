// A seal layer asked for and unavailable is an error naming it; a layer turned off is not used.
import assert from "node:assert/strict";
import { hostname } from "node:os";
import { describe, it } from "node:test";
import { SealUnavailableError } from "../../src/core/errors.ts";
import { checkSeal, spawnJailed } from "../../src/jail/index.ts";
import { RESOLVED_DEFAULT_SEAL } from "../../src/options/index.ts";
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
