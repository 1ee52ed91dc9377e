// Which warm parent a stateless native run goes to (src/engines/native/route.ts): standard-library
// imports only → the light parent, unless the stack's parent holds a module it imports that the
// light one does not; anything the scan cannot read as that → the stack's.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { importedModules, MAX_SCANNED_CODE, needsStack, type Parents } from "../../../src/engines/native/route.ts";

const STDLIB = new Set([
  "os",
  "sys",
  "json",
  "math",
  "random",
  "collections",
  "datetime",
  "urllib",
  "__future__",
  "time",
]);
const PARENTS: Parents = {
  stdlib: STDLIB,
  light: new Set(["os", "sys", "json", "math", "random", "collections", "datetime", "urllib", "urllib.parse"]),
  stack: new Set(["os", "sys", "json", "numpy", "urllib", "urllib.parse", "urllib.request"]),
};
const PRELOAD = ["numpy", "pandas", "matplotlib"];
const files = (f: Record<string, string>) =>
  new Map(Object.entries(f).map(([k, v]) => [k, new TextEncoder().encode(v)]));
const stack = (code: string, f: Record<string, string> = {}) => needsStack({ code, files: files(f) }, PARENTS, PRELOAD);

describe("native route: the modules an import statement names", () => {
  it("reads import and from-import statements, aliases, dotted names, lists and blocks", () => {
    const code = [
      "import os, sys as system",
      "from collections import (",
      "    Counter,",
      "    deque)",
      "import urllib.request",
      "from datetime import datetime as dt",
      "if True:",
      "    import json",
      "x = 1; import math",
      "from __future__ import annotations",
      "import \\",
      "    time",
    ].join("\n");
    assert.deepEqual([...importedModules(code)!].sort(), [
      "__future__",
      "__future__.annotations",
      "collections",
      "collections.Counter",
      "collections.deque",
      "datetime",
      "datetime.datetime",
      "json",
      "math",
      "os",
      "sys",
      "time",
      "urllib.request",
    ]);
    assert.deepEqual([...importedModules("print(1)")!], []);
    assert.deepEqual([...importedModules("import os\r\nimport json\r\n")!].sort(), ["json", "os"]);
    assert.deepEqual([...importedModules("from os import *")!], ["os"]);
  });

  it("gives up on an import it does not read", () => {
    for (const code of [
      "from . import x",
      "from .mod import x",
      "import os as",
      "import (os)",
      "print('import numpy')", // a word in a string: read as not a statement
      "x = 1 if True else 2  # import pandas",
      "import os.",
    ])
      assert.equal(importedModules(code), undefined, code);
  });
});

describe("native route: the guest's text is read once (the scan runs on the host's event loop)", () => {
  it("leaves code over MAX_SCANNED_CODE unscanned: the stack's parent", () => {
    const long = `${"x = 1\n".repeat(MAX_SCANNED_CODE / 6)}print(x)`;
    assert.ok(long.length > MAX_SCANNED_CODE);
    assert.equal(importedModules(long), undefined);
    assert.equal(stack(long), true);
  });

  it("reads no statement inside another's list, and no list without its end", () => {
    // The shapes that made each statement's scan run on to the end of the text (a megabyte of them
    // held the host for over a minute): now each is refused at once.
    assert.equal(importedModules("from x import (\n".repeat(1000)), undefined);
    assert.equal(importedModules("from x import (a,\nfrom y import b)"), undefined);
    assert.deepEqual([...importedModules(";from x".repeat(1000))!], [], "no import in it");
    // and well-formed lists, one after another, are still read.
    assert.deepEqual([...importedModules("from os import (path,\n sep)\nfrom json import (dumps)")!].sort(), [
      "json",
      "json.dumps",
      "os",
      "os.path",
      "os.sep",
    ]);
  });
});

describe("native route: light or stack", () => {
  it("sends standard-library code the light parent holds, or neither holds, to the light parent", () => {
    assert.equal(stack("print(1)"), false);
    assert.equal(stack("import json, math\njson.dumps({'pi': math.pi})"), false);
    assert.equal(stack("from collections import Counter\nCounter('abca').most_common(1)"), false);
    assert.equal(stack("import urllib.parse\nurllib.parse.quote('a b')"), false);
    assert.equal(stack("x = 2 ** 10\nx", { "data.csv": "a,b\n1,2" }), false);
    assert.equal(stack("import time\ntime.time() > 0"), false, "in neither: both children would import it");
  });

  it("sends the stack, any other module and anything unread to the stack's parent", () => {
    for (const code of [
      "import numpy as np",
      "import pandas",
      "from matplotlib import pyplot as plt",
      "import matplotlib.pyplot as plt",
      "import requests", // not the standard library: a package (which may import the stack)
      "import os\nimport scipy.stats",
      "__import__('pandas')",
      "import importlib\nimportlib.import_module('pandas')",
      "exec('import pandas')",
      "eval(\"__import__('pandas')\")",
      "import runpy",
      "from . import x",
      "print('import')",
    ])
      assert.equal(stack(code), true, code);
  });

  it("sends a module the stack's parent holds and the light one does not to the stack's parent", () => {
    assert.equal(stack("import urllib.request"), true);
    assert.equal(stack("from urllib import request"), true, "a submodule named in a from-import");
    assert.equal(stack("from urllib.request import urlopen"), true);
    assert.equal(stack("from urllib import parse"), false);
  });

  it("sends a run with an importable input file to the stack's parent (a module of its own may import anything)", () => {
    assert.equal(stack("import helper", { "helper.py": "import pandas" }), true);
    assert.equal(stack("print(1)", { "pkg/__init__.py": "" }), true);
    assert.equal(stack("print(1)", { "ext.so": "" }), true);
  });

  it("sends a preloaded standard-library module to the stack's parent (it has it imported)", () => {
    assert.equal(needsStack({ code: "import json", files: new Map() }, PARENTS, ["json"]), true);
    assert.equal(needsStack({ code: "import os.path", files: new Map() }, PARENTS, ["os.path"]), true);
  });

  it("sends everything but import-free code to the stack's parent before the parents are known", () => {
    const none: Parents = { stdlib: new Set(), light: new Set(), stack: new Set() };
    assert.equal(needsStack({ code: "import json", files: new Map() }, none, PRELOAD), true);
    assert.equal(needsStack({ code: "1 + 1", files: new Map() }, none, PRELOAD), false);
  });
});
