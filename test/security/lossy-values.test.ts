// Threat: values that come back from the guest unbounded, changed, or dressed up as something else.
// An exception's fields must be capped (a 30 MiB message must not cross whole), a string result must
// round-trip exactly, an object must not become a host Error by claiming Symbol.toStringTag = "Error",
// and code must not be taken for a module because a template literal has a line starting with export.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ERROR_FIELD_CAPS } from "../../src/engines/lib/quickjs/service.ts";
import { warmCell, type WarmCell } from "../helpers/quickjs.ts";

describe("quickjs: values come back bounded and exact", () => {
  let warm: WarmCell;
  before(async () => {
    warm = await warmCell({ timeoutMs: 5000, memoryMb: 256 });
  });
  after(() => warm.close());

  it("a 30 MiB error message, name and stack are cut at their named caps", async () => {
    const r = await warm.run(
      `const e = new Error("m".repeat(30 * 1024 * 1024)); e.name = "N".repeat(1e6); e.stack = "    at x (main.js:1:1)\\n".repeat(1e5); throw e`,
    );
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.error.kind, "runtime");
    assert.ok(r.error.message.length <= ERROR_FIELD_CAPS.message + 100, `message is ${r.error.message.length}`);
    assert.match(r.error.message, /characters cut, limit 8192\]$/);
    assert.ok(r.error.name.length <= ERROR_FIELD_CAPS.name + 100);
    assert.ok((r.error.stack ?? "").length <= ERROR_FIELD_CAPS.stack + 200);
    assert.ok(JSON.stringify(r).length < 64 * 1024);
  });

  it("a thrown 30 MiB string is cut too", async () => {
    const r = await warm.run(`throw "s".repeat(30 * 1024 * 1024)`);
    assert.equal(!r.ok && r.error.kind, "runtime");
    assert.ok(!r.ok && r.error.message.length <= ERROR_FIELD_CAPS.message + 100);
  });

  it("a top-level string keeps NUL and lone surrogates, like the same string in an array", async () => {
    const r = await warm.run(`"a\\0b\\uD800c\\uDFFF"`);
    assert.equal(r.ok && r.value, "a\0b\uD800c\uDFFF");
    const inArray = await warm.run(`["a\\0b\\uD800c\\uDFFF"]`);
    assert.deepEqual(inArray.ok && inArray.value, ["a\0b\uD800c\uDFFF"]);
  });

  it("an object with Symbol.toStringTag = 'Error' stays a plain object", async () => {
    const r = await warm.run(`({ [Symbol.toStringTag]: "Error", name: "TypeError", message: "fake" })`);
    assert.equal(r.ok, true);
    assert.equal(r.ok && r.value instanceof Error, false);
    assert.deepEqual(r.ok && r.value, { name: "TypeError", message: "fake" });
    const real = await warm.run(`new TypeError("real")`);
    assert.equal(real.ok && real.value instanceof Error, true);
  });

  it("a template literal line starting with export or import does not make the code a module", async () => {
    const r = await warm.run("const t = `\nexport default 1\nimport x from 'y'\n`;\nt.length");
    assert.equal(r.ok && r.value, "\nexport default 1\nimport x from 'y'\n".length);
    const comment = await warm.run("/*\nexport default 2\n*/ 40 + 2");
    assert.equal(comment.ok && comment.value, 42);
    const real = await warm.run("const x = 5;\nexport default x * 2");
    assert.equal(real.ok && real.value, 10);
  });

  it("plain data and tagged data both come back exactly (fast path and walker)", async () => {
    const r = await warm.run(`({ a: [1, "x", null, true, { b: -1.5 }], __proto__: null, ["__proto__"]: 1 })`);
    assert.deepEqual(r.ok && r.value, { a: [1, "x", null, true, { b: -1.5 }], ["__proto__"]: 1 });
    assert.equal(r.ok && Object.getPrototypeOf(r.value), Object.prototype);
    const tagged = await warm.run(`({ a: [1, undefined, NaN, -0, 2n], m: new Map([[1, 2]]), d: new Date(0) })`);
    assert.deepEqual(tagged.ok && tagged.value, {
      a: [1, undefined, NaN, -0, 2n],
      m: new Map([[1, 2]]),
      d: new Date(0),
    });
  });
});
