// The one parser of display items: each bundle rebuilt from an allowlist, binary values proven base64
// of their own format, sizes counted and capped, and every problem said in its own words.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DisplayCollector, parseDisplayItem, parseDisplayItems, utf8Length } from "../../src/kit/display.ts";
import type { DisplayItem } from "../../src/core/types.ts";

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString("base64");
const LIMITS = { maxResults: 3, maxDisplayItemBytes: 1000, maxDisplayBytes: 1500 };

function refusal(raw: unknown): string {
  const r = parseDisplayItem(raw, 1000);
  assert.equal(r.ok, false);
  return r.ok ? "" : `${r.error.kind} ${r.error.name}: ${r.error.message}`;
}

describe("parseDisplayItem", () => {
  it("rebuilds a good bundle, with text/plain, a PNG, HTML and JSON data", () => {
    const raw = {
      data: { "text/plain": "fig", "image/png": PNG, "text/html": "<b>x</b>", "application/json": { a: [1] } },
    };
    const r = parseDisplayItem(raw, 1000);
    assert.ok(r.ok);
    assert.deepEqual(r.item, { data: raw.data, main: false });
    assert.notEqual(r.item.data, raw.data, "a fresh object, not the runtime's");
    assert.equal(r.bytes, 3 + PNG.length + 8 + JSON.stringify({ a: [1] }).length);
  });

  it("refuses each kind of malformed item in its own words", () => {
    assert.match(
      refusal({ data: { "text/plain": "x", "application/x-evil": "y" } }),
      /denied DisplayError: .*MIME type "application\/x-evil" is not one the host returns/,
    );
    assert.match(
      refusal({ data: { "text/plain": "x", "image/png": "not base64!" } }),
      /image\/png value is not base64/,
    );
    assert.match(
      refusal({ data: { "text/plain": "x", "image/png": Buffer.from("GIF89a..").toString("base64") } }),
      /does not start with the image\/png signature/,
    );
    assert.match(refusal({ data: { "text/html": "<b>" } }), /it has no text\/plain/);
    assert.match(refusal({ data: { "text/plain": 5 } }), /value of "text\/plain" is not a string/);
    assert.match(refusal("nope"), /not \{data/);
    assert.match(refusal({ data: { "text/plain": "x" }, main: "yes" }), /main flag is not a boolean/);
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    assert.match(refusal({ data: { "text/plain": "x", "application/json": deep } }), /nested over/);
  });

  it("caps one item's bytes: an output_limit naming maxDisplayItemBytes with the size", () => {
    const r = parseDisplayItem({ data: { "text/plain": "x".repeat(1001) } }, 1000);
    assert.equal(r.ok, false);
    if (r.ok) return;
    assert.equal(r.error.kind, "output_limit");
    assert.equal(r.error.limit, "maxDisplayItemBytes");
    assert.match(r.error.message, /1001 bytes, over the 1000-byte limit \(limits\.maxDisplayItemBytes\)/);
  });

  it("counts UTF-8 bytes as the Python tiers do", () => {
    assert.equal(utf8Length("aé€😀"), Buffer.byteLength("aé€😀"));
    assert.equal(utf8Length("\ud800x"), 4);
  });
});

describe("DisplayCollector", () => {
  it("keeps items in order, hands each to onResult, and stops at the count cap with its own message", () => {
    const seen: DisplayItem[] = [];
    const c = new DisplayCollector(LIMITS, (i) => seen.push(i));
    for (let i = 0; i < 3; i++) assert.equal(c.add({ data: { "text/plain": String(i) } }), undefined);
    const failure = c.add({ data: { "text/plain": "3" } });
    assert.equal(failure?.limit, "maxResults");
    assert.match(failure?.message ?? "", /more than 3 items \(limits\.maxResults\)/);
    assert.deepEqual(
      seen.map((i) => i.data["text/plain"]),
      ["0", "1", "2"],
    );
    assert.equal(c.add({ data: { "text/plain": "4" } }), failure, "stopped for good");
  });

  it("caps the total bytes, and refuses a second main result", () => {
    const c = new DisplayCollector(LIMITS);
    assert.equal(c.add({ data: { "text/plain": "x".repeat(900) } }), undefined);
    assert.equal(c.add({ data: { "text/plain": "x".repeat(900) } })?.limit, "maxDisplayBytes");
    const m = new DisplayCollector(LIMITS);
    assert.equal(m.add({ data: { "text/plain": "a" }, main: true }), undefined);
    assert.match(m.add({ data: { "text/plain": "b" }, main: true })?.message ?? "", /a second main result/);
  });

  it("a listener that throws does not break the run", () => {
    const c = new DisplayCollector(LIMITS, () => {
      throw new Error("caller bug");
    });
    assert.equal(c.add({ data: { "text/plain": "x" } }), undefined);
    assert.equal(c.items.length, 1);
  });

  it("parseDisplayItems checks a whole list the same way", () => {
    assert.equal(parseDisplayItems("x", LIMITS).ok, false);
    const r = parseDisplayItems([{ data: { "text/plain": "a" } }, { data: { "text/plain": "b" }, main: true }], LIMITS);
    assert.ok(r.ok);
    assert.deepEqual(
      r.items.map((i) => i.main),
      [false, true],
    );
  });
});
