// The warm parent's hello (src/engines/native/warm.ts): the one line the host takes from a parent
// before any child exists, bounded before the route (route.ts) trusts its standard-library names.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseHello } from "../../../src/engines/native/warm.ts";

describe("warm parent: its hello", () => {
  it("reads the module count and the standard library's names", () => {
    const hello = parseHello(
      JSON.stringify({ pid: 1, modules: 83, stdlib: ["os", "json", "__future__"], loaded: ["os", "os.path", "json"] }),
    );
    assert.equal(hello?.modules, 83);
    assert.deepEqual([...hello.stdlib].sort(), ["__future__", "json", "os"]);
    assert.deepEqual([...hello.loaded].sort(), ["json", "os", "os.path"]);
  });

  it("refuses anything else: no list, a name that is not one, too many names, no count", () => {
    const loaded = ["os"];
    for (const raw of [
      "not json",
      JSON.stringify({ modules: 83, loaded }),
      JSON.stringify({ modules: 83, stdlib: "os", loaded }),
      JSON.stringify({ modules: 83, stdlib: ["os", "numpy; rm"], loaded }),
      JSON.stringify({ modules: 83, stdlib: ["os", 7], loaded }),
      JSON.stringify({ modules: 83, stdlib: ["a".repeat(101)], loaded }),
      JSON.stringify({ modules: 83, stdlib: Array.from({ length: 2001 }, (_, i) => `m${i}`), loaded }),
      JSON.stringify({ modules: "many", stdlib: [], loaded }),
      JSON.stringify({ modules: 83, stdlib: ["os"] }),
      JSON.stringify({ modules: 83, stdlib: ["os"], loaded: ["os..path"] }),
      JSON.stringify({ modules: 83, stdlib: ["os"], loaded: [`a.${"b".repeat(200)}`] }),
      JSON.stringify({ modules: 83, stdlib: ["os"], loaded: Array.from({ length: 5001 }, (_, i) => `m${i}`) }),
    ])
      assert.equal(parseHello(raw), undefined, raw.slice(0, 80));
  });
});
