// Threat: the web-platform globals of the JavaScript box (URL, Intl, crypto, events, console, …) as a
// way out — a host object handed to the guest, a path to the host realm or to the host bindings behind
// them, or a high-resolution clock for timing side channels. A walk over everything reachable from the
// global object and from instances of every runtime class must find only user-realm objects, no host
// binding, and a clock no finer than whole milliseconds.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { HOST_FUNCTION_PREFIX } from "../../src/engines/lib/quickjs/runtime/install.ts";
import { familiesFor, SEALED } from "../../src/engines/lib/quickjs/runtime/table.ts";

// Builds instances of every runtime class, then walks every object reachable through own properties
// (values and, on instances, getters), prototypes and function results that are objects.
const WALK = String.raw`
const roots = [globalThis];
const add = (v) => roots.push(v);
add(new URL("http://u:p@h/p?q=1#f")); add(new URL("http://h/?a=1").searchParams); add(new URLSearchParams("a=1"));
add(new TextEncoder()); add(new TextDecoder()); add(new TextEncoder().encodeInto("a", new Uint8Array(2)));
const ctl = new AbortController(); add(ctl); add(ctl.signal); ctl.abort(); add(ctl.signal.reason);
add(AbortSignal.timeout(1)); add(AbortSignal.any([ctl.signal])); add(new Event("x")); add(new CustomEvent("c", { detail: 1 }));
add(new EventTarget()); add(new DOMException("m", "DataCloneError"));
add(performance); add(crypto); add(crypto.subtle); add(crypto.getRandomValues(new Uint8Array(4)));
add(await crypto.subtle.digest("SHA-256", new Uint8Array(1)));
const key = await crypto.subtle.importKey("raw", new Uint8Array([1]), { name: "HMAC", hash: "SHA-256" }, true, ["sign", "verify"]);
add(key); add(key.algorithm); add(await crypto.subtle.sign("HMAC", key, new Uint8Array(1))); add(await crypto.subtle.exportKey("raw", key));
const nf = new Intl.NumberFormat("en", { style: "currency", currency: "EUR" });
add(nf); add(nf.format); add(nf.formatToParts(1)); add(nf.resolvedOptions());
const dtf = new Intl.DateTimeFormat("en", { timeZone: "Asia/Tokyo" }); add(dtf); add(dtf.formatToParts(0)); add(dtf.resolvedOptions());
add(new Intl.Collator("en")); add(new Intl.Collator().compare); add(new Intl.PluralRules("en")); add(new Intl.RelativeTimeFormat("en").formatToParts(1, "day"));
add(new Intl.ListFormat("en")); add(new Intl.DisplayNames("en", { type: "region" })); add(Intl.getCanonicalLocales("en"));
add(structuredClone({ m: new Map([[1, new Date()]]) }));
const blob = new Blob(["b"], { type: "text/plain" }), file = new File([blob], "f.txt");
add(blob); add(file); add(blob.slice(0, 1)); add(structuredClone(file)); add(await blob.arrayBuffer()); add(await file.bytes());
for (const thrower of [() => new URL("nope"), () => atob("!"), () => new Intl.DateTimeFormat("en", { timeZone: "Nope/Nope" }), () => crypto.getRandomValues(new Uint8Array(70000)), () => structuredClone(() => 1), () => new TextDecoder("x")]) {
  try { thrower(); } catch (e) { add(e); }
}
try { await crypto.subtle.digest("MD5", new Uint8Array(1)); } catch (e) { add(e); }

const seen = new Set(), problems = [];
const queue = roots.slice();
const isInstance = new Set(roots.slice(1));
const realmFunction = Function, realmObjectProto = Object.prototype;
while (queue.length && seen.size < 20000) {
  const v = queue.shift();
  if (v === null || (typeof v !== "object" && typeof v !== "function") || seen.has(v)) continue;
  seen.add(v);
  if (typeof v === "function") {
    if (typeof v.name === "string" && v.name.startsWith(${JSON.stringify(HOST_FUNCTION_PREFIX)})) problems.push("host binding reachable: " + v.name);
    if (!(v instanceof realmFunction) && v !== realmFunction.prototype) problems.push("function from another realm: " + v.name);
    if (v.constructor !== realmFunction && Object.getPrototypeOf(v) === realmFunction.prototype) problems.push("odd constructor: " + v.name);
  }
  let p = v, depth = 0;
  while (p !== null && depth++ < 50) p = Object.getPrototypeOf(p);
  const proto = Object.getPrototypeOf(v);
  if (proto !== null) {
    let q = v; while (Object.getPrototypeOf(q) !== null) q = Object.getPrototypeOf(q);
    if (q !== realmObjectProto) problems.push("prototype chain ends outside the realm");
  }
  queue.push(proto);
  for (const k of Reflect.ownKeys(v)) {
    let d;
    try { d = Object.getOwnPropertyDescriptor(v, k); } catch (e) { continue; }
    if (!d) continue;
    if ("value" in d) queue.push(d.value);
    else { queue.push(d.get, d.set); }
  }
  // Getters on an instance's prototypes, read on the instance (what user code sees).
  if (isInstance.has(v)) {
    for (let pr = proto; pr && pr !== realmObjectProto; pr = Object.getPrototypeOf(pr)) {
      for (const k of Reflect.ownKeys(pr)) {
        const d = Object.getOwnPropertyDescriptor(pr, k);
        if (d && d.get) { try { const got = d.get.call(v); queue.push(got); if (got && typeof got === "object") isInstance.add(got); } catch (e) {} }
      }
    }
  }
}
const viaFunction = realmFunction("return this")() === globalThis;
({ problems: problems.slice(0, 20), objects: seen.size, viaFunction })
`;

describe("quickjs: the runtime globals hand out nothing of the host", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());
  const js = (code: string) => sandbox.run({ language: "javascript", code, limits: { timeoutMs: 20_000 } });

  for (const mode of ["named (eager install)", "reflective (lazy stubs)"]) {
    it(`no host object, host binding or foreign realm is reachable: ${mode}`, async () => {
      // `globalThis` in the program makes the engine install stubs; the plain version names every family.
      const code = mode.startsWith("reflective") ? WALK : WALK.replace(/globalThis/g, "(0, eval)('this')");
      const r = await js(code);
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      const v = r.ok ? (r.value as { problems: string[]; objects: number; viaFunction: boolean }) : undefined;
      assert.deepEqual(v?.problems, []);
      assert.equal(v?.viaFunction, true);
      assert.ok((v?.objects ?? 0) > 500, `walked only ${v?.objects} objects`);
    });
  }

  it("every family's globals are present and from the user's realm", async () => {
    // (fetch, present only with the network, is checked in test/engines/lib/quickjs/runtime/table.test.ts)
    const names = familiesFor(SEALED).flatMap((f) => f.globals);
    const r = await js(
      `${JSON.stringify(names)}.filter((n) => { const g = globalThis[n]; return !g || (typeof g === "function" ? g.constructor !== Function : Object.getPrototypeOf(Object.getPrototypeOf(g) ?? {}) === undefined); })`,
    );
    assert.deepEqual(r.ok && r.value, []);
  });

  it("performance.now and Event.timeStamp are whole milliseconds: no high-resolution clock", async () => {
    const r = await js(`
      const samples = [];
      for (let i = 0; i < 20000; i++) samples.push(performance.now());
      const steps = new Set();
      for (let i = 1; i < samples.length; i++) if (samples[i] !== samples[i - 1]) steps.add(samples[i] - samples[i - 1]);
      [samples.every(Number.isInteger), [...steps].every((s) => s >= 1), samples.every((s, i) => i === 0 || s >= samples[i - 1]), Number.isInteger(new Event("x").timeStamp)]`);
    assert.deepEqual(r.ok && r.value, [true, true, true, true]);
  });

  it("replacing builtins the families use breaks only the guest's own calls, never the host", async () => {
    // The families are built from the guest's own builtins (as any polyfill is); what they pass to the
    // host is checked there. Tampering can make a call throw in the guest, not reach past it.
    const r = await js(`
      JSON.parse = () => ({ evil: true }); JSON.stringify = () => "[[1,2,3]]";
      Array.prototype.map = function () { return [{ toString() { throw new Error("tampered"); } }]; };
      String.prototype.toWellFormed = function () { return { not: "a string" }; };
      const out = [];
      for (const f of [() => new URL("http://h/a?b=1").searchParams.get("b"), () => new URLSearchParams({ a: "1" }).toString(),
        () => new Intl.NumberFormat("en").format(1234), () => (5).toLocaleString(), () => crypto.randomUUID().length]) {
        try { out.push(f()); } catch (e) { out.push(e instanceof Error ? e.constructor.name : typeof e); }
      }
      out`);
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.equal(r.ok && Array.isArray(r.value), true);
    const next = await js(`[JSON.parse("[1]")[0], new URL("http://h/?b=2").searchParams.get("b")]`);
    assert.deepEqual(next.ok && next.value, [1, "2"]);
  });
});
