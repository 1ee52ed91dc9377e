// `display` in JavaScript and TypeScript (src/engines/lib/quickjs/runtime/display.ts): values, raw
// MIME bundles (binary types from a Uint8Array too), Deno's Symbol.for("Jupyter.display") protocol,
// items in order and as they happen, on a worker thread and in-process, and in a session and its fork.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createSandbox, type Sandbox } from "../../../../../src/index.ts";
import type { DisplayItem } from "../../../../../src/core/types.ts";

const PNG_HEAD = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13];

for (const isolation of ["thread", "in-process"] as const) {
  describe(`display in JavaScript (${isolation})`, () => {
    let sandbox: Sandbox;
    before(async () => {
      sandbox = await createSandbox({ javascript: { isolation } });
    });
    after(async () => {
      await sandbox.close();
    });

    it("shows values and raw bundles in order, each as it happens", async () => {
      const seen: DisplayItem[] = [];
      const code = [
        `display({ "text/html": "<b>one</b>" }, { raw: true });`,
        `console.log("between");`,
        `display({ n: 2, list: [1, 2] });`,
        `display("three");`,
        `display({ "image/png": new Uint8Array(${JSON.stringify(PNG_HEAD)}), "text/plain": "a png" }, { raw: true });`,
        `display({ [Symbol.for("Jupyter.display")]() { return { "text/markdown": "**five**" }; } });`,
        `const n: number = 6; n`,
      ].join("\n");
      const r = await sandbox.run({ language: "typescript", code, onResult: (i) => seen.push(i) });
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.value, 6);
      assert.equal(r.stdout, "between\n");
      assert.deepEqual(
        r.results.map((i) => i.data),
        [
          { "text/html": "<b>one</b>", "text/plain": "<text/html>" },
          {
            "text/plain": '{\n  "n": 2,\n  "list": [\n    1,\n    2\n  ]\n}',
            "application/json": { n: 2, list: [1, 2] },
          },
          { "text/plain": "three" },
          { "image/png": Buffer.from(PNG_HEAD).toString("base64"), "text/plain": "a png" },
          { "text/markdown": "**five**", "text/plain": "**five**" },
        ],
      );
      assert.deepEqual(seen, r.results);
    });

    it("onResult hears an item while the run is still going", async () => {
      let heard = 0;
      const r = await sandbox.run({
        language: "javascript",
        code: "display(1); await heardSoFar()",
        hostFunctions: { heardSoFar: () => heard },
        onResult: () => heard++,
      });
      assert.equal(r.ok && r.value, 1);
    });

    it("a bad bundle is a TypeError the code can catch; past maxResults the run ends with output_limit", async () => {
      const bad = await sandbox.run({
        language: "javascript",
        code: `try { display({ "text/plain": "x", "image/png": "%%%" }, { raw: true }); "shown" } catch (e) { e.name }`,
      });
      assert.deepEqual(bad.ok && [bad.value, bad.results], ["TypeError", []]);
      const many = await sandbox.run({
        language: "javascript",
        code: `for (let i = 0; i < 100; i++) { try { display(i) } catch {} }`,
        limits: { maxResults: 5 },
      });
      assert.equal(many.ok, false);
      assert.equal(!many.ok && many.error.limit, "maxResults");
      assert.equal(many.results.length, 5, "the items shown before the cap are kept");
    });

    it("a session and its fork show items too", async () => {
      await using session = await sandbox.session({ language: "javascript" });
      await session.run({ language: "javascript", code: "globalThis.k = 1" });
      const r = await session.run({ language: "javascript", code: "display(k)" });
      assert.deepEqual(r.results, [{ data: { "text/plain": "1" }, main: false }]);
      await using fork = await session.fork();
      const f = await fork.run({ language: "javascript", code: "display(k + 1)" });
      assert.deepEqual(f.results, [{ data: { "text/plain": "2" }, main: false }]);
    });
  });
}
