// The warm parent's hello (src/engines/native/warm.ts): the one line the host takes from a parent
// before any child exists, bounded before the route (route.ts) trusts its standard-library names.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHello } from "../../../src/engines/native/warm.ts";

describe("warm parent: its hello", () => {
  it("reads the module count and the standard library's names", () => {
    const hello = parseHello(JSON.stringify({ pid: 1, modules: 83, stdlib: ["os", "json", "__future__"] }));
    assert.equal(hello?.modules, 83);
    assert.deepEqual([...hello.stdlib].sort(), ["__future__", "json", "os"]);
  });

  it("refuses anything else: no list, a name that is not one, too many names, no count", () => {
    for (const raw of [
      "not json",
      JSON.stringify({ modules: 83 }),
      JSON.stringify({ modules: 83, stdlib: "os" }),
      JSON.stringify({ modules: 83, stdlib: ["os", "numpy; rm"] }),
      JSON.stringify({ modules: 83, stdlib: ["os", 7] }),
      JSON.stringify({ modules: 83, stdlib: ["a".repeat(101)] }),
      JSON.stringify({ modules: 83, stdlib: Array.from({ length: 2001 }, (_, i) => `m${i}`) }),
      JSON.stringify({ modules: "many", stdlib: [] }),
    ])
      assert.equal(parseHello(raw), undefined, raw.slice(0, 80));
  });
});
