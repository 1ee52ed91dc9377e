// Threat: guest code names its own failure. An exception's name and message are the guest's to choose;
// if the host derived kinds from them, a run could claim to have been stopped by the deadline, the memory
// cap, the stack limit or the import policy — steering callers, retry logic and monitoring with a lie,
// and (for kinds that retire a runtime) costing the host a rebuild at will. timeout, memory, stack and
// denied must come only from what the host observed.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { warmCell, type WarmCell } from "../helpers/quickjs.ts";

const FORGERIES: { name: string; code: string; errorName: string; message: RegExp }[] = [
  {
    name: "a forged interrupt",
    code: `throw Object.assign(new Error("interrupted"), { name: "InternalError" })`,
    errorName: "InternalError",
    message: /^interrupted$/,
  },
  {
    name: "a forged out-of-memory",
    code: `throw Object.assign(new Error("out of memory"), { name: "InternalError" })`,
    errorName: "InternalError",
    message: /^out of memory$/,
  },
  {
    name: "a forged stack overflow",
    code: `throw Object.assign(new RangeError("stack overflow"), { name: "InternalError" })`,
    errorName: "InternalError",
    message: /^stack overflow$/,
  },
  {
    name: "a forged module refusal",
    code: `throw new ReferenceError("could not load module 'fs'")`,
    errorName: "ReferenceError",
    message: /^could not load module 'fs'$/,
  },
  {
    name: "a forged module refusal in the host's own words",
    code: `throw new Error("import of 'fs' is not available: the sandbox has no module loader (no import, no require); use the globals it provides")`,
    errorName: "Error",
    message: /^import of 'fs' is not available/,
  },
  {
    name: "an error with InternalError's prototype but a name of its own",
    code: `throw Object.assign(Object.create(Error.prototype), { name: "InternalError", message: "out of memory" })`,
    errorName: "Error",
    message: /^Uncaught /,
  },
  { name: "a thrown null with memory to spare", code: `throw null`, errorName: "Error", message: /^Uncaught null$/ },
];

describe("quickjs: error kinds are the host's verdict", () => {
  let warm: WarmCell;
  before(async () => {
    warm = await warmCell({ timeoutMs: 2000, memoryMb: 16 });
  });
  after(() => warm.close());

  for (const forgery of FORGERIES) {
    it(`${forgery.name} is a runtime error with the guest's own words`, async () => {
      const r = await warm.run(forgery.code);
      assert.equal(r.ok, false);
      assert.equal(!r.ok && r.error.kind, "runtime", JSON.stringify(r));
      assert.equal(!r.ok && r.error.name, forgery.errorName);
      assert.match(!r.ok ? r.error.message : "", forgery.message);
    });
  }

  it("InternalError is not a global: user code cannot build a genuine-looking one", async () => {
    const r = await warm.run(`typeof InternalError`);
    assert.equal(r.ok && r.value, "undefined");
  });

  it("the real ones are still recognised: deadline, memory cap, stack limit, refused import", async () => {
    const cases: [string, string][] = [
      ["for (;;) {}", "timeout"],
      ["const a = []; for (;;) a.push({ x: a.length })", "memory"],
      ["function f() { return f() + 1 } f()", "stack"],
      ["export { x } from 'node:fs'", "denied"],
      ["await import('fs')", "denied"],
    ];
    for (const [code, kind] of cases) {
      const r = await warm.run(code, { limits: { timeoutMs: kind === "timeout" ? 300 : 10_000, memoryMb: 4 } });
      assert.equal(!r.ok && r.error.kind, kind, `${code}: ${JSON.stringify(r)}`);
    }
  });

  it("a refused import that the code catches does not make a later error `denied`", async () => {
    const r = await warm.run(`try { await import("fs") } catch {} throw new Error("mine")`);
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.equal(!r.ok && r.error.message, "mine");
  });
});
