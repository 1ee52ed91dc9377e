// Threat: a code-mode program reaching host tools it was not given — tools of the same AI SDK tool set
// that were not routed to code mode, tools that need approval, prototype names — by calling the bridge
// directly instead of through `tools`; or calling past the bound.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { generateText, isStepCount, tool } from "ai";
import { z } from "zod";
import { codeModeTool } from "../../src/adapters/ai/index.ts";
import { createSandbox, type Sandbox } from "../../src/index.ts";
import { scriptedModel } from "../adapters/ai/scripted-model.ts";

describe("code mode (AI SDK)", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox();
  });
  after(() => sandbox.close());

  const executed: string[] = [];
  const allowed = tool({
    description: "allowed",
    inputSchema: z.object({}),
    execute: () => (executed.push("allowed"), "ok"),
  });
  const deleteAccount = tool({
    description: "direct only",
    inputSchema: z.object({}),
    execute: () => (executed.push("deleteAccount"), "deleted"),
  });
  const transfer = tool({
    description: "needs approval",
    inputSchema: z.object({}),
    needsApproval: true,
    execute: () => (executed.push("transfer"), "sent"),
  });

  async function runProgram(code: string, maxToolCalls = 20): Promise<string> {
    const model = scriptedModel([{ call: "code_mode", input: { code } }, { say: () => "done" }]);
    await generateText({
      model,
      tools: { code_mode: codeModeTool({ sandbox, maxToolCalls }), allowed, deleteAccount, transfer },
      experimental_toolCallers: { allowed: ["code_mode"], transfer: ["code_mode"] },
      stopWhen: isStepCount(3),
      prompt: "go",
    });
    return model.seen[1]![0]!.text;
  }

  it("only routed tools without approval are callable; the bridge refuses every other name", async () => {
    executed.length = 0;
    const names = [
      "deleteAccount",
      "transfer",
      "constructor",
      "__proto__",
      "toString",
      "hasOwnProperty",
      "",
      "allowed",
    ];
    const program = `const out = [];
for (const n of ${JSON.stringify(names)}) {
  try { out.push([n, await __wasmcell_tool(n, {})]); } catch (e) { out.push([n, "refused: " + e.message]); }
}
out`;
    const text = await runProgram(program);
    assert.deepEqual(executed, ["allowed"]);
    for (const n of names.filter((x) => x !== "allowed")) {
      assert.ok(
        text.includes(`[${JSON.stringify(n)}, "refused: tools.${n} does not exist; available: allowed"]`),
        `${n}: ${text}`,
      );
    }
    assert.ok(text.includes('["allowed", "ok"]'), text);
  });

  it("the `tools` object is frozen: it cannot be extended or re-pointed", async () => {
    executed.length = 0;
    const text = await runProgram(`tools.deleteAccount = () => __wasmcell_tool("deleteAccount", {});
tools.allowed = null;
let r;
try { r = await tools.deleteAccount({}); } catch (e) { r = e.name; }
[Object.isFrozen(tools), Object.keys(tools), typeof tools.allowed, r]`);
    assert.match(text, /value: \[true, \["allowed"\], "function", "TypeError"\]/);
    assert.deepEqual(executed, []);
  });

  it("calls past the bound are refused even when the program catches and retries", async () => {
    executed.length = 0;
    const text = await runProgram(
      `let ok = 0, refused = 0;
for (let i = 0; i < 20; i++) { try { await tools.allowed({}); ok++; } catch { refused++; } }
({ ok, refused })`,
      5,
    );
    assert.match(text, /value: \{ ok: 5, refused: 15 \}/);
    assert.equal(executed.length, 5);
  });
});
