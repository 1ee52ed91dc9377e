// The sentence that tells a model what network it has never says less or more than the host enforces.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { describeNetwork } from "../../../src/adapters/tools/network.ts";
import { PYTHON_ENGINES } from "../../../src/core/types.ts";
import { resolveOptions } from "../../../src/options/index.ts";

describe("describeNetwork", () => {
  const { network } = resolveOptions({ network: { allow: ["api.example.com"] } });

  it("says there is none when the sandbox grants none, whatever the Python engine", () => {
    for (const engine of PYTHON_ENGINES) assert.match(describeNetwork(undefined, engine), /^There is no network/);
  });

  it("names the allowed hosts and how each Python engine reaches them (the native tier through its proxy)", () => {
    assert.ok(network);
    const pyodide = describeNetwork(network, "pyodide");
    assert.match(pyodide, /api\.example\.com/);
    assert.match(pyodide, /Python: urllib\.request or http\.client/);
    const native = describeNetwork(network, "native");
    assert.match(native, /api\.example\.com/);
    assert.match(native, /Python: requests, urllib\.request or http\.client, through the proxy/);
    assert.doesNotMatch(native, /has no network/);
  });
});
