// The globals guest.ts installs into a user context, seen from inside: `console` is a WebIDL namespace
// (web-platform-tests' console/console-is-a-namespace.any.js checks the same) on the thread pool and
// in-process, and in a session that first needs it in a later run.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../src/index.ts";
import { QuickJSEngine } from "../../../../src/engines/lib/quickjs/index.ts";
import { resolveOptions, resolveRequest } from "../../../../src/options/index.ts";

const NAMESPACE = `(() => {
  const d = Object.getOwnPropertyDescriptor(globalThis, "console");
  const proto = Object.getPrototypeOf(console);
  return {
    descriptor: [d.writable, d.enumerable, d.configurable, d.value === console],
    tag: Object.prototype.toString.call(console),
    proto: [Object.getOwnPropertyNames(proto).length, Object.getPrototypeOf(proto) === Object.prototype],
    enumerated: Object.keys(globalThis).includes("console"),
    logs: typeof console.log,
  };
})()`;

const EXPECTED = {
  descriptor: [true, false, true, true],
  tag: "[object console]",
  proto: [0, true],
  enumerated: false,
  logs: "function",
};

describe("console is installed as a WebIDL namespace", () => {
  let thread: Sandbox;
  let inProcess: Sandbox;
  before(async () => {
    thread = await createSandbox({ javascript: { isolation: "thread", workers: 1 } });
    inProcess = await createSandbox({ javascript: { isolation: "in-process" } });
  });
  after(async () => {
    await thread.close();
    await inProcess.close();
  });

  for (const [name, box] of [
    ["on the thread pool", () => thread],
    ["in-process", () => inProcess],
  ] as const) {
    it(`non-enumerable, writable, configurable, tagged "console", an empty prototype (${name})`, async () => {
      const r = await box().run({ language: "javascript", code: NAMESPACE });
      assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
      assert.deepEqual(r.ok && r.value, EXPECTED);
    });
  }

  it("can be replaced and deleted like any namespace, and still prints", async () => {
    const r = await thread.run({
      language: "javascript",
      code: `console.log("printed"); const c = console; globalThis.console = 1; const replaced = console === 1;
        delete globalThis.console; [replaced, typeof globalThis.console, typeof c.log]`,
    });
    assert.equal(r.ok, true, JSON.stringify(!r.ok && r.error));
    assert.deepEqual(r.ok && r.value, [true, "undefined", "function"]);
    assert.equal(r.stdout, "printed\n");
  });

  it("the same in a session whose later run is the first to need console", async () => {
    const engine = new QuickJSEngine();
    const options = resolveOptions({});
    try {
      const s = await engine.openSession();
      const first = await s.run(resolveRequest({ language: "javascript", code: "1 + 1" }, options));
      assert.equal(first.ok, true);
      const second = await s.run(resolveRequest({ language: "javascript", code: NAMESPACE }, options));
      assert.equal(second.ok, true, JSON.stringify(!second.ok && second.error));
      assert.deepEqual(second.ok && second.value, EXPECTED);
      await s.close();
    } finally {
      await engine.close();
    }
  });
});
