// makeOffer / requestWithin: the one place that decides what a request from someone other than the
// operator may ask for (every face calls it; test/security/untrusted-request-raises-limits.test.ts
// drives the faces). Pure functions: no engine runs here.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InvalidOptionError } from "../../src/core/errors.ts";
import { DEFAULT_LIMITS, makeOffer, requestWithin, type OfferSettings } from "../../src/options/index.ts";

const sandbox: OfferSettings["sandbox"] = { limits: { ...DEFAULT_LIMITS }, python: { engine: "pyodide" } };
const field = (name: string, pattern?: RegExp) => (e: unknown) =>
  e instanceof InvalidOptionError && e.field === name && (pattern === undefined || pattern.test(e.message));

describe("requestWithin: the operator's limits are ceilings", () => {
  const offer = makeOffer({ sandbox });

  it("a request that asks for nothing gets the operator's limits and Python engine", () => {
    const r = requestWithin({ language: "python", code: "1" }, offer);
    assert.deepEqual(r.limits, DEFAULT_LIMITS);
    assert.equal(r.engine, "pyodide");
    assert.equal(requestWithin({ language: "javascript", code: "1" }, offer).engine, undefined);
  });

  it("a request may lower any limit, and keeps the rest", () => {
    const r = requestWithin({ language: "javascript", code: "1", limits: { memoryMb: 16, timeoutMs: 100 } }, offer);
    assert.deepEqual(r.limits, { ...DEFAULT_LIMITS, memoryMb: 16, timeoutMs: 100 });
  });

  it("each limit above its ceiling is refused, naming the field, the value and the ceiling", () => {
    for (const [key, value] of Object.entries(DEFAULT_LIMITS)) {
      assert.throws(
        () => requestWithin({ language: "javascript", code: "1", limits: { [key]: value + 1 } }, offer),
        field(`request.limits.${key}`, new RegExp(`is ${value + 1}, above the ceiling of ${value}\\b`)),
      );
    }
  });

  it("limits of the wrong shape are refused as the front door refuses them", () => {
    assert.throws(
      () => requestWithin({ language: "javascript", code: "1", limits: { memoryMb: -1 } }, offer),
      field("request.limits.memoryMb"),
    );
    assert.throws(
      () => requestWithin({ language: "javascript", code: "1", limits: { cpu: 1 } as never }, offer),
      field("request.limits.cpu", /unknown option/),
    );
  });

  it("an engine the operator did not offer is refused; the one offered may be named", () => {
    assert.throws(
      () => requestWithin({ language: "python", engine: "native", code: "1" }, offer),
      field("request.engine", /"native" is not offered here: Python runs on "pyodide"/),
    );
    assert.equal(requestWithin({ language: "python", engine: "pyodide", code: "1" }, offer).engine, "pyodide");
  });

  it("host functions, output callbacks and signals are the operator's alone", () => {
    for (const key of ["hostFunctions", "onOutput", "signal"]) {
      assert.throws(
        () => requestWithin({ language: "javascript", code: "1", [key]: {} } as never, offer),
        field(`request.${key}`, /operator's to give/),
      );
    }
  });

  it("files and network pass on for the front door to bound and narrow", () => {
    const r = requestWithin(
      { language: "javascript", code: "1", files: { "a.txt": "x" }, network: { maxRequests: 1 } },
      offer,
    );
    assert.deepEqual(r.files, { "a.txt": "x" });
    assert.deepEqual(r.network, { maxRequests: 1 });
  });
});

describe("makeOffer: what the operator may offer beyond the defaults", () => {
  it("a face's own limits and engine are its defaults and its ceilings", () => {
    const offer = makeOffer({ sandbox, limits: { memoryMb: 32 }, pythonEngine: "native" });
    assert.equal(offer.defaults.memoryMb, 32);
    assert.equal(offer.ceilings.memoryMb, 32);
    assert.deepEqual(offer.pythonEngines, ["native"]);
  });

  it("maxLimits raise the ceilings above the defaults; pythonEngines offers more engines", () => {
    const offer = makeOffer({ sandbox, maxLimits: { timeoutMs: 30_000 }, pythonEngines: ["pyodide", "native"] });
    const r = requestWithin({ language: "python", engine: "native", code: "1", limits: { timeoutMs: 30_000 } }, offer);
    assert.equal(r.limits?.timeoutMs, 30_000);
    assert.equal(r.engine, "native");
    assert.equal(requestWithin({ language: "python", code: "1" }, offer).limits?.timeoutMs, DEFAULT_LIMITS.timeoutMs);
  });

  it("bad settings throw, naming the option", () => {
    assert.throws(() => makeOffer({ sandbox, maxLimits: { timeoutMs: 1_000 } }), field("maxLimits.timeoutMs", /below/));
    assert.throws(() => makeOffer({ sandbox, maxLimits: { memoryMb: 0 } }), field("maxLimits.memoryMb"));
    assert.throws(() => makeOffer({ sandbox, limits: { maxFiles: -1 } }), field("limits.maxFiles"));
    assert.throws(() => makeOffer({ sandbox, pythonEngines: ["native"] }), field("pythonEngines", /"pyodide"/));
    assert.throws(() => makeOffer({ sandbox, pythonEngines: ["quickjs" as never] }), field("pythonEngines"));
  });
});
