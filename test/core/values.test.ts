import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeValue } from "../../src/core/values.ts";
import { renderValue } from "../../src/adapters/tools/render-value.ts";

describe("encodeValue (the --json encoding of values JSON cannot hold)", () => {
  test("JSON values are themselves", () => {
    const v = { a: [1, "x", true, null], b: { c: 2.5 } };
    assert.deepEqual(encodeValue(v), v);
  });

  test("non-JSON values become tagged objects", () => {
    assert.deepEqual(encodeValue(undefined), { $type: "undefined" });
    assert.deepEqual(encodeValue(NaN), { $type: "number", value: "NaN" });
    assert.deepEqual(encodeValue(-Infinity), { $type: "number", value: "-Infinity" });
    assert.deepEqual(encodeValue(-0), { $type: "number", value: "-0" });
    assert.deepEqual(encodeValue(12345678901234567890n), { $type: "bigint", value: "12345678901234567890" });
    assert.deepEqual(encodeValue(new Date(0)), { $type: "Date", value: "1970-01-01T00:00:00.000Z" });
    assert.deepEqual(encodeValue(new Map([["k", 1n]])), {
      $type: "Map",
      entries: [["k", { $type: "bigint", value: "1" }]],
    });
    assert.deepEqual(encodeValue(new Set([1, 2])), { $type: "Set", values: [1, 2] });
    assert.deepEqual(encodeValue(new Uint8Array([1, 2])), { $type: "Uint8Array", values: [1, 2] });
    assert.deepEqual(encodeValue(new TypeError("bad")), { $type: "Error", name: "TypeError", message: "bad" });
    assert.deepEqual(encodeValue([undefined]), [{ $type: "undefined" }]);
  });

  test("a guest object with its own $type key is wrapped, so tags stay unambiguous", () => {
    assert.deepEqual(encodeValue({ $type: "bigint", value: "1" }), {
      $type: "object",
      value: { $type: "bigint", value: "1" },
    });
  });

  test("cycles are marked, not fatal", () => {
    const a: Record<string, unknown> = { n: 1 };
    a.self = a;
    assert.deepEqual(encodeValue(a), { n: 1, self: "[Circular]" });
  });

  test("the result is JSON-serialisable", () => {
    const out = JSON.stringify(encodeValue({ m: new Map([[1, NaN]]), u: undefined, b: 1n }));
    assert.equal(
      out,
      '{"m":{"$type":"Map","entries":[[1,{"$type":"number","value":"NaN"}]]},"u":{"$type":"undefined"},"b":{"$type":"bigint","value":"1"}}',
    );
  });
});

describe("renderValue (what a model reads)", () => {
  test("JavaScript-flavoured text", () => {
    assert.equal(renderValue(undefined), "undefined");
    assert.equal(renderValue("1"), '"1"');
    assert.equal(renderValue(1), "1");
    assert.equal(renderValue(10n), "10n");
    assert.equal(renderValue(-0), "-0");
    assert.equal(renderValue({ a: [1, 2], "b-c": null }), '{ a: [1, 2], "b-c": null }');
    assert.equal(renderValue(new Map([["a", 1]])), 'Map(1) {"a" => 1}');
    assert.equal(renderValue(new Set([1])), "Set(1) {1}");
    assert.equal(renderValue(new Error("boom")), "Error: boom");
  });

  test("wide arrays say how much is left out", () => {
    const text = renderValue(Array.from({ length: 1_005 }, (_, i) => i));
    assert.match(text, /… 5 more\]$/);
  });
});
