// Failure classification as pure functions: hostile errorInfo texts are bounded, and kinds other than
// runtime/syntax need a host observation.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { classify, parseErrorInfo, refusedImportMessage } from "../../../../src/engines/lib/quickjs/classify.ts";
import { ERROR_FIELD_CAPS } from "../../../../src/engines/lib/quickjs/service.ts";
import { resolveOptions } from "../../../../src/options/index.ts";

const limits = resolveOptions({}).limits;
const at = { limits, filename: "main.js", code: "", phase: "eval" as const };
const none = { interrupt: undefined, allocatorNearCap: false, refusedImports: [] };

describe("quickjs failure classification", () => {
  it("parses malformed or hostile texts into bounded, typed fields", () => {
    for (const text of [undefined, "", "nope", "[]", "null", '{"name":5,"message":{},"line":-1,"column":1.5}']) {
      const info = parseErrorInfo(text);
      assert.deepEqual(info, { isError: false, genuine: false, isNull: false, name: "Error", message: "", stack: "" });
    }
    const huge = parseErrorInfo(JSON.stringify({ isError: true, message: "m".repeat(1e6), name: "n".repeat(1e5) }));
    assert.ok(huge.message.length < ERROR_FIELD_CAPS.message + 100);
    assert.ok(huge.name.length < ERROR_FIELD_CAPS.name + 100);
  });

  it("a genuine InternalError gives memory/stack; the same words without it give runtime", () => {
    for (const [message, kind] of [
      ["out of memory", "memory"],
      ["stack overflow", "stack"],
      ["interrupted", "runtime"],
    ] as const) {
      const base = { isError: true, isNull: false, name: "InternalError", message, stack: "" };
      assert.equal(classify({ ...base, genuine: true }, none, at).kind, kind);
      assert.equal(classify({ ...base, genuine: false }, none, at).kind, "runtime");
    }
  });

  it("timeout comes from the interrupt, denied from the loader", () => {
    const info = { isError: true, genuine: false, isNull: false, name: "Error", message: "x", stack: "" };
    assert.equal(classify(info, { ...none, interrupt: "timeout" }, at).kind, "timeout");
    const refused = { ...info, message: refusedImportMessage("fs") };
    assert.equal(classify(refused, none, at).kind, "runtime");
    assert.equal(classify(refused, { ...none, refusedImports: ["fs"] }, at).kind, "denied");
  });
});
