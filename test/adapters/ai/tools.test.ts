// End-to-end: the AI SDK's generateText with its own mock language model, scripted to call wasmcell's
// tools and to answer from the tool results it was sent. Real engines, no network.

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateText, isStepCount, tool } from "ai";
import { z } from "zod";
import { codeModeTool, runCodeTool } from "../../../src/adapters/ai/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { PNG_PYTHON } from "../fixtures.ts";
import { scriptedModel, type ToolResultSeen } from "./scripted-model.ts";

const echo = (results: ToolResultSeen[]) => `I read: ${results.map((r) => `[${r.type}] ${r.text}`).join(" | ")}`;

describe("AI SDK tools (generateText + MockLanguageModelV4)", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  });
  after(async () => {
    await sandbox.close();
  });

  test("JavaScript: the model reads the last expression and stdout", async () => {
    const model = scriptedModel([
      {
        call: "run_code",
        input: { language: "javascript", code: "console.log('hello from js');\n[1, 2, 3].map((x) => x * 2)" },
      },
      { say: echo },
    ]);
    const result = await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "double 1..3",
    });
    const seen = model.seen[1]![0]!;
    assert.equal(seen.type, "text");
    assert.match(seen.text, /^ok \(javascript/);
    assert.match(seen.text, /value: \[2, 4, 6\]/);
    assert.match(seen.text, /stdout:\nhello from js/);
    assert.match(result.text, /\[2, 4, 6\]/);
  });

  test("TypeScript: types are stripped", async () => {
    const model = scriptedModel([
      { call: "run_code", input: { language: "typescript", code: "const n: number = 20;\nn + 1" } },
      { say: echo },
    ]);
    await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "ts",
    });
    assert.match(model.seen[1]![0]!.text, /value: 21/);
  });

  test("Python: the model reads print output and the last expression", async () => {
    const model = scriptedModel([
      { call: "run_code", input: { language: "python", code: "print(sum(range(10)))\n6 * 7" } },
      { say: echo },
    ]);
    const result = await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "py",
    });
    const seen = model.seen[1]![0]!;
    assert.match(seen.text, /^ok \(python/);
    assert.match(seen.text, /value: 42/);
    assert.match(seen.text, /stdout:\n45/);
    assert.match(result.text, /42/);
  });

  test("an error the model reads, fixes and runs again", async () => {
    const model = scriptedModel([
      { call: "run_code", input: { language: "javascript", code: "const total = 10;\ntotl * 2" } },
      { call: "run_code", input: { language: "javascript", code: "const total = 10;\ntotal * 2" } },
      { say: echo },
    ]);
    const result = await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(4),
      prompt: "fix it",
    });
    const failed = model.seen[1]![0]!;
    assert.equal(failed.type, "error-text");
    assert.match(failed.text, /^error: runtime: ReferenceError: .*totl/);
    assert.match(failed.text, /line 2/);
    assert.match(model.seen[2]![0]!.text, /value: 20/);
    assert.match(result.text, /value: 20/);
  });

  test("a timeout comes back as kind `timeout` with the limit named", async () => {
    const model = scriptedModel([
      { call: "run_code", input: { language: "javascript", code: "while (true) {}" } },
      { say: echo },
    ]);
    await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox, limits: { timeoutMs: 300 } }) },
      stopWhen: isStepCount(3),
      prompt: "loop",
    });
    const seen = model.seen[1]![0]!;
    assert.equal(seen.type, "error-text");
    assert.match(seen.text, /^error: timeout/);
    assert.match(seen.text, /300 ms time limit/);
  });

  test("bad input (unknown language) reaches the model as a readable error; nothing runs", async () => {
    const model = scriptedModel([{ call: "run_code", input: { language: "ruby", code: "puts 1" } }, { say: echo }]);
    await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "ruby",
    });
    const seen = model.seen[1]![0]!;
    assert.equal(seen.type, "error-text");
    assert.equal(
      seen.text,
      'invalid input: language must be one of "javascript", "typescript", "python"\nNothing was run. Fix the arguments and call again.',
    );
  });

  test("a Python-written PNG comes back as image content", async () => {
    const model = scriptedModel([{ call: "run_code", input: { language: "python", code: PNG_PYTHON } }, { say: echo }]);
    await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "draw",
    });
    const seen = model.seen[1]![0]!;
    assert.equal(seen.type, "content");
    assert.match(seen.text, /files written: red\.png \(image\/png, \d+ B, shown below\)/);
    assert.equal(seen.files.length, 1);
    assert.equal(seen.files[0]!.mediaType, "image/png");
    assert.deepEqual(
      [...Buffer.from(seen.files[0]!.base64, "base64").subarray(0, 8)],
      [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    );
  });

  test("a displayed figure comes back as an image part of the model output", async () => {
    const code = "display({'image/png': open('red.png', 'rb').read(), 'text/plain': 'red'}, raw=True)";
    const model = scriptedModel([
      { call: "run_code", input: { language: "python", code: `${PNG_PYTHON}\n${code}` } },
      { say: echo },
    ]);
    await generateText({
      model,
      tools: { run_code: runCodeTool({ sandbox }) },
      stopWhen: isStepCount(3),
      prompt: "show it",
    });
    const seen = model.seen[1]![0]!;
    assert.equal(seen.type, "content");
    assert.match(seen.text, /displayed \(1\):\n\[1\] \[image\/png; image shown below\]\nred/);
    const shown = seen.files.find((f) => f.filename === "display-1.png");
    assert.ok(shown, JSON.stringify(seen.files.map((f) => f.filename)));
    assert.equal(shown.mediaType, "image/png");
    assert.deepEqual([...Buffer.from(shown.base64, "base64").subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });

  test("session: the model builds on earlier calls; a timeout restarts the session and says so", async () => {
    const model = scriptedModel([
      { call: "run_code", input: { language: "python", code: "import math\nradius = 2" } },
      { call: "run_code", input: { language: "python", code: "round(math.pi * radius ** 2, 2)" } },
      { call: "run_code", input: { language: "javascript", code: "let seen = ['a']; seen.length" } },
      { call: "run_code", input: { language: "javascript", code: "seen.push('b'); seen" } },
      { call: "run_code", input: { language: "javascript", code: "while (true) {}" } },
      { call: "run_code", input: { language: "javascript", code: "typeof seen" } },
      { say: echo },
    ]);
    await using run_code = runCodeTool({ sandbox, session: true, limits: { timeoutMs: 500 } });
    await generateText({ model, tools: { run_code }, stopWhen: isStepCount(8), prompt: "stateful" });
    assert.match(
      model.doGenerateCalls[0]!.tools!.map((t) => (t as { description: string }).description).join(),
      /State persists between calls/,
    );
    assert.match(model.seen[2]![0]!.text, /value: 12\.57/);
    assert.match(model.seen[4]![0]!.text, /value: \["a", "b"\]/);
    assert.match(model.seen[5]![0]!.text, /^error: timeout[\s\S]*The session was restarted after this error/);
    assert.match(model.seen[6]![0]!.text, /value: "undefined"/);
  });

  describe("code mode", () => {
    const calls: string[] = [];
    const getInventory = tool({
      description: "Units in stock for a product.",
      inputSchema: z.object({ productId: z.string() }),
      execute: ({ productId }) => {
        calls.push(`inventory:${productId}`);
        return { productId, availableUnits: 42 };
      },
    });
    const getDemand = tool({
      description: "Units customers asked for.",
      inputSchema: z.object({ productId: z.string() }),
      execute: ({ productId }) => {
        calls.push(`demand:${productId}`);
        return { productId, requestedUnits: 31 };
      },
    });
    const failing = tool({
      description: "Always fails.",
      inputSchema: z.object({ reason: z.string().optional() }),
      execute: (): { ok: boolean } => {
        throw new Error("warehouse offline");
      },
    });

    test("a program calls two other tools (routed with experimental_toolCallers) and returns a value", async () => {
      calls.length = 0;
      const program = [
        "const [inv, dem] = await Promise.all([",
        "  tools.getInventory({ productId: 'sku_1' }),",
        "  tools.getDemand({ productId: 'sku_1' }),",
        "]);",
        "({ sufficient: inv.availableUnits >= dem.requestedUnits, remaining: inv.availableUnits - dem.requestedUnits })",
      ].join("\n");
      const model = scriptedModel([{ call: "code_mode", input: { code: program } }, { say: echo }]);
      const result = await generateText({
        model,
        tools: { code_mode: codeModeTool({ sandbox }), getInventory, getDemand },
        experimental_toolCallers: { getInventory: ["code_mode"], getDemand: ["code_mode"] },
        stopWhen: isStepCount(3),
        prompt: "compare",
      });
      assert.deepEqual(calls.sort(), ["demand:sku_1", "inventory:sku_1"]);
      const seen = model.seen[1]![0]!;
      assert.equal(seen.type, "text");
      assert.match(seen.text, /value: \{ sufficient: true, remaining: 11 \}/);
      assert.match(seen.text, /tool calls: (getInventory, getDemand|getDemand, getInventory)/);
      // Routed tools are reachable only through code mode, and code mode's description lists them.
      const offered = model.doGenerateCalls[0]!.tools!.map((t) => t.name);
      assert.deepEqual(offered, ["code_mode"]);
      const description = (model.doGenerateCalls[0]!.tools![0] as { description: string }).description;
      assert.match(description, /tools\.getInventory\(input: \{ productId: string \}\)/);
      assert.match(result.text, /remaining: 11/);
    });

    test("a failing tool is an exception the program can catch; tools passed directly work too", async () => {
      const program = "let msg;\ntry { await tools.failing({}); } catch (e) { msg = e.message; }\nmsg";
      const model = scriptedModel([{ call: "code_mode", input: { code: program } }, { say: echo }]);
      await generateText({
        model,
        tools: { code_mode: codeModeTool({ sandbox, tools: { failing } }) },
        stopWhen: isStepCount(3),
        prompt: "try",
      });
      assert.match(model.seen[1]![0]!.text, /value: "tools\.failing failed: warehouse offline"/);
    });

    test("tool calls are bounded", async () => {
      const program = "for (let i = 0; i < 10; i++) await tools.getDemand({ productId: 'x' + i });\n'done'";
      const model = scriptedModel([{ call: "code_mode", input: { code: program } }, { say: echo }]);
      await generateText({
        model,
        tools: { code_mode: codeModeTool({ sandbox, tools: { getDemand }, maxToolCalls: 3 }) },
        stopWhen: isStepCount(3),
        prompt: "many",
      });
      const seen = model.seen[1]![0]!;
      assert.equal(seen.type, "error-text");
      assert.match(seen.text, /tool call limit reached: at most 3 tool calls/);
    });

    test("a top-level return works as the program's result", async () => {
      const model = scriptedModel([
        {
          call: "code_mode",
          input: { code: "const d = await tools.getDemand({ productId: 'a' });\nreturn d.requestedUnits * 2;" },
        },
        { say: echo },
      ]);
      await generateText({
        model,
        tools: { code_mode: codeModeTool({ sandbox, tools: { getDemand } }) },
        stopWhen: isStepCount(3),
        prompt: "ret",
      });
      assert.match(model.seen[1]![0]!.text, /value: 62/);
    });
  });
});
