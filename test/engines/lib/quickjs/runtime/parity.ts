// Runs the same JavaScript expression in the sandbox and in this Node process and compares what
// comes out: the value (normalised to JSON by the same prelude in both places) or the error's name.
// Node is the reference: the box should behave like it for the same inputs.
import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { QuickJSEngine } from "../../../../../src/engines/lib/quickjs/index.ts";
import { resolveOptions, resolveRequest } from "../../../../../src/options/index.ts";

// The box's defaults (en-US, UTC) are Node's here too.
process.env.TZ = "UTC";

/** Turns a value into JSON text the same way on both sides (bytes as hex, Maps and Sets as lists). */
const PRELUDE = String.raw`
function __norm(v, depth) {
  depth = depth || 0;
  if (depth > 8) return "<deep>";
  if (v === undefined) return "<undefined>";
  if (typeof v === "bigint") return v + "n";
  if (typeof v === "number" && !isFinite(v)) return String(v);
  if (typeof v === "number" && v === 0 && 1 / v < 0) return "-0";
  if (typeof v === "function") return "<function " + v.name + ">";
  if (typeof v === "symbol") return String(v);
  if (v === null || typeof v !== "object") return v;
  if (v instanceof ArrayBuffer) v = new Uint8Array(v);
  if (ArrayBuffer.isView(v)) return Object.prototype.toString.call(v) + ":" + Array.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
  if (v instanceof Map) return ["Map", Array.from(v, function (e) { return [__norm(e[0], depth + 1), __norm(e[1], depth + 1)]; })];
  if (v instanceof Set) return ["Set", Array.from(v, function (e) { return __norm(e, depth + 1); })];
  if (v instanceof Date) return "Date:" + v.getTime();
  if (v instanceof Error) return { error: v.name, message: v.message };
  if (Array.isArray(v)) return v.map(function (x) { return __norm(x, depth + 1); });
  var o = {};
  Object.keys(v).forEach(function (k) { o[k] = __norm(v[k], depth + 1); });
  return o;
}`;

function wrap(expr: string): string {
  return `${PRELUDE}
(async () => {
  try { return JSON.stringify(__norm(await (async () => (${expr}))())); }
  catch (e) { return JSON.stringify({ threw: e && typeof e === "object" ? e.name : typeof e }); }
})()`;
}

async function inNode(expr: string): Promise<string> {
  return (await (0, eval)(wrap(expr))) as string;
}

/** One test per case: `[title, expression]`; the expression may await. */
export function parity(cases: readonly (readonly [string, string])[]): void {
  const engine = new QuickJSEngine();
  const options = resolveOptions({});
  before(() => engine.warm());
  after(() => engine.close());
  for (const [title, expr] of cases) {
    it(`${title}: ${expr.length > 70 ? `${expr.slice(0, 67)}...` : expr}`, async () => {
      const r = await engine.run(resolveRequest({ language: "javascript", code: wrap(expr) }, options));
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      const box = r.ok ? (r.value as string) : "";
      assert.equal(box, await inNode(expr));
    });
  }
}

/** Runs code in the sandbox engine and returns stdout/stderr (for console and program comparisons). */
export function boxRunner() {
  const engine = new QuickJSEngine();
  const options = resolveOptions({});
  before(() => engine.warm());
  after(() => engine.close());
  return (code: string) => engine.run(resolveRequest({ language: "javascript", code }, options));
}
