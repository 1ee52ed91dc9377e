// The QuickJS half of sessions as data: capture and restore of a session's module instance, and what
// it relies on in quickjs-emscripten (internals.ts). If an upgrade moves any of it, this fails first.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { QuickJSRuntime } from "quickjs-emscripten-core";
import { SnapshotRejectedError } from "../../../../src/core/errors.ts";
import { QuickJSEngine } from "../../../../src/engines/lib/quickjs/index.ts";
import {
  readHostRefs,
  runtimePointer,
  wrapRuntime,
  writeHostRefs,
} from "../../../../src/engines/lib/quickjs/internals.ts";
import { checkInventory } from "../../../../src/engines/lib/quickjs/state.ts";
import { WasmModule } from "../../../../src/engines/lib/quickjs/modules.ts";
import { pagesOf, writePages } from "../../../../src/engines/quickjs/state-codec.ts";
import { resolveOptions, resolveRequest } from "../../../../src/options/index.ts";

const options = resolveOptions({});
const req = (code: string) => resolveRequest({ language: "javascript", code }, options);

describe("QuickJS session state", () => {
  it("quickjs-emscripten still has what a restore relies on: the runtime constructor, contextPointer, HostRefMap", async () => {
    const m = await WasmModule.create(
      () => undefined,
      () => true,
    );
    const rt = m.quickjs.newRuntime();
    const ctx = rt.newContext();
    const fn = ctx.newFunction("f", () => ctx.newNumber(7));
    ctx.setProp(ctx.global, "f", fn);
    fn.dispose();
    const { refs, nextId, freelist } = readHostRefs(rt);
    assert.equal(refs.size, 1, "newFunction put its body in the runtime's HostRefMap");
    assert.ok(Number.isInteger(nextId) && Array.isArray(freelist));
    // A second wrapper of the same JSRuntime, as a restore builds one.
    const again = wrapRuntime(m.quickjs, runtimePointer(rt));
    assert.ok(again instanceof QuickJSRuntime);
    writeHostRefs(again, refs, nextId, freelist);
    assert.equal(readHostRefs(again).refs.get([...refs.keys()][0]!), [...refs.values()][0]);
    const wrapped = again.newContext({ contextPointer: (ctx as unknown as { ctx: { value: never } }).ctx.value });
    // The call reaches the body through the new wrappers' callbacks and host references.
    const r = wrapped.evalCode("f()");
    const v = r.unwrap();
    assert.equal(wrapped.getNumber(v), 7, "a context wrapped around an existing pointer calls the same host body");
    v.dispose();
  });

  it("a captured session restores into a pristine module byte for byte and answers as before", async () => {
    const engine = new QuickJSEngine();
    const s = await engine.openSession();
    await s.run(req("globalThis.o = { list: [1, 2, 3] }; globalThis.f = (v) => v + o.list.length; console.log('x')"));
    const { inventory, pages } = await s.capture(({ inventory, memory }) => ({ inventory, pages: pagesOf(memory) }));
    let written: Uint8Array | undefined;
    const copy = await engine.restoreSession(inventory, (memory, dirty) => {
      writePages(pages, memory, dirty);
      written = pagesOf(memory).data;
    });
    assert.deepEqual(written, pages.data, "the restored memory is the captured one");
    const out = await copy.run(req("console.log('again'); f(4)"));
    assert.ok(out.ok && out.value === 7 && out.stdout === "again\n", JSON.stringify(out));
    await copy.close();
    await s.close();
    assert.equal(engine.sessionModules.live, 0);
    await engine.close();
  });

  it("hostile snapshot: an inventory whose pointers leave its memory, or whose memory is over the cap, is refused", () => {
    const base = {
      format: 1,
      memoryBytes: 16 << 20,
      rt: 4096,
      svc: 8192,
      ctx: 16384,
      serialize: 64,
      format_: 72,
      errorInfo: 80,
      baselineBytes: 100,
      guest: {
        installed: { console: false, timers: false, fs: false },
        consoleIndent: "",
        hostNames: [],
        internalErrorProto: 88,
        jsonParse: 0,
        promiseResolve: 0,
        promiseCtor: 0,
        toUint8Array: 0,
        kept: [],
      },
      hostRefs: [],
      nextId: -(2 ** 31),
      freelist: [],
    };
    assert.equal(checkInventory(base, 32 << 20).ctx, 16384);
    for (const [what, bad] of [
      ["a pointer past the end", { ...base, ctx: 17 << 20 }],
      ["an unaligned pointer", { ...base, rt: 4097 }],
      ["memory over the cap", { ...base, memoryBytes: 64 << 20 }],
      ["memory not whole pages", { ...base, memoryBytes: (16 << 20) + 4096 }],
      ["a host id never given", { ...base, hostRefs: [[5, "console.log"]] }],
      [
        "a repeated host id",
        {
          ...base,
          nextId: 10,
          hostRefs: [
            [5, "console.log"],
            [5, "console.log"],
          ],
        },
      ],
    ] as const)
      assert.throws(() => checkInventory(bad, 32 << 20), SnapshotRejectedError, what);
  });
});
