// The one table: what the tool description tells the model is what the guest gets, and each family's
// detection catches the code that uses it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createToolkit } from "../../../../../src/adapters/tools/index.ts";
import { createSandbox } from "../../../../../src/index.ts";
import { FAMILIES, familiesFor, familiesNeeded, SEALED } from "../../../../../src/engines/lib/quickjs/runtime/table.ts";

describe("the runtime table", () => {
  it("the run_code description lists every family the box installs", async () => {
    await using sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    const d = createToolkit({ sandbox, languages: ["javascript"] }).anthropic()[0]!.description;
    for (const f of familiesFor(SEALED)) assert.ok(d.includes(f.describe), `${f.name} missing from: ${d}`);
    // And what it names exists in the guest.
    const r = await sandbox.run({
      language: "javascript",
      code: `${JSON.stringify(familiesFor(SEALED).flatMap((f) => f.globals))}.filter((n) => typeof globalThis[n] === "undefined")`,
    });
    assert.deepEqual(r.ok && r.value, []);
  });

  it("with the network granted, the description and the guest have the fetch family too", async () => {
    await using sandbox = await createSandbox({ network: { allow: ["example.com"] } });
    const d = sandbox.describeJavaScriptRuntime();
    for (const f of familiesFor({ network: true })) assert.ok(d.includes(f.describe), `${f.name} missing from: ${d}`);
    const names = JSON.stringify(FAMILIES.flatMap((f) => f.globals));
    const eager = await sandbox.run({
      language: "javascript",
      code: `[typeof fetch, typeof Headers, typeof Response]`,
    });
    assert.deepEqual(eager.ok && eager.value, ["function", "function", "function"]);
    // Reached reflectively, each global is there on first touch (lazy stubs, as for every family).
    const lazy = await sandbox.run({
      language: "javascript",
      // present, and the user realm's own (as test/security/runtime-globals-host-reach.test.ts checks for the rest)
      code: `${names}.filter((n) => { const g = globalThis[n]; return !g || (typeof g === "function" && g.constructor !== Function); })`,
    });
    assert.deepEqual(lazy.ok && lazy.value, []);
    // The bridge never shows on the global object.
    const bridge = await sandbox.run({
      language: "javascript",
      code: `Object.getOwnPropertyNames(globalThis).filter((n) => n.startsWith("__wasmcell"))`,
    });
    assert.deepEqual(bridge.ok && bridge.value, []);
  });

  it("a family is installed when the code names one of its globals, with what it requires", () => {
    for (const f of FAMILIES) {
      for (const g of f.globals) {
        const needed = familiesNeeded(`new ${g}()`, { network: true }, false);
        assert.ok(needed.includes(f.name), `${g} does not select ${f.name}`);
        for (const r of f.requires ?? []) assert.ok(needed.indexOf(r) < needed.indexOf(f.name), `${r} after ${f.name}`);
      }
      for (const p of f.patches ?? []) {
        const method = p.split(".").pop()!;
        const code = p.startsWith("console.") ? `${p}(1)` : `x.${method}()`;
        assert.ok(familiesNeeded(code, SEALED, false).includes(f.name), `${p} does not select ${f.name}`);
      }
    }
    assert.deepEqual(familiesNeeded("1 + 1", SEALED, false), []);
    assert.deepEqual(familiesNeeded("fetch(url)", SEALED, false), []);
  });

  it("a family can depend on a capability: present only when it is granted", () => {
    // As fetch will be: a family whose `when` asks for the network.
    const table = [
      ...FAMILIES,
      { ...FAMILIES.find((f) => f.name === "url")!, when: (c: { network: boolean }) => c.network },
    ];
    const gated = table
      .slice(0, -1)
      .filter((f) => f.name !== "url")
      .concat(table.slice(-1));
    assert.equal(familiesNeeded("new URL('x')", SEALED, false, gated).includes("url"), false);
    assert.equal(familiesNeeded("new URL('x')", { network: true }, false, gated).includes("url"), true);
    assert.equal(
      familiesFor(SEALED, gated).some((f) => f.name === "url"),
      false,
    );
  });

  it("a session gets every family (as lazy stubs) and keeps their state across runs", async () => {
    await using sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
    await using session = await sandbox.session({ language: "javascript" });
    const a = await session.run({
      code: "const u = new URL('http://a/?x=1'); console.group('g'); u.searchParams.get('x')",
    });
    assert.deepEqual([a.ok && a.value, a.stdout], ["1", "g\n"]);
    const b = await session.run({
      code: "console.log('in'); console.groupEnd(); console.log(u.href); crypto.randomUUID().length",
    });
    assert.deepEqual([b.ok && b.value, b.stdout], [36, "  in\nhttp://a/?x=1\n"]);
  });
});
