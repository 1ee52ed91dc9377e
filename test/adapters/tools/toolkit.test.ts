// Raw function-calling: JSON Schemas for OpenAI/Anthropic and handleToolCall, against real engines.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { createToolkit } from "../../../src/adapters/tools/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";

describe("raw tool schemas and handleToolCall", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ python: { pool: 1, prewarm: false } });
  });
  after(async () => {
    await sandbox.close();
  });

  test("one definition, three wire formats", () => {
    const kit = createToolkit({ sandbox });
    const [openai] = kit.openai();
    const [responses] = kit.openaiResponses();
    const [anthropic] = kit.anthropic();
    assert.equal(openai!.function.name, "run_code");
    assert.equal(responses!.name, "run_code");
    assert.equal(anthropic!.name, "run_code");
    assert.equal(openai!.function.description, anthropic!.description);
    assert.deepEqual(openai!.function.parameters, anthropic!.input_schema);
    assert.deepEqual(responses!.parameters, anthropic!.input_schema);
    const schema = anthropic!.input_schema as {
      type: string;
      properties: Record<string, { enum?: string[]; maxLength?: number }>;
      required: string[];
      additionalProperties: boolean;
    };
    assert.equal(schema.type, "object");
    assert.deepEqual(schema.required, ["language", "code"]);
    assert.deepEqual(schema.properties.language!.enum, ["javascript", "typescript", "python"]);
    assert.equal(schema.properties.code!.maxLength, sandbox.options.limits.maxCodeBytes);
    assert.equal(schema.additionalProperties, false);
    assert.equal("$schema" in schema, false);
  });

  test("the description states what comes back and the application's limits", () => {
    const kit = createToolkit({ sandbox, limits: { timeoutMs: 1234 }, languages: ["python"], pythonEngine: "native" });
    const d = kit.anthropic()[0]!.description;
    assert.match(d, /value of the last expression/);
    assert.match(d, /stdout\/stderr/);
    assert.match(d, /files the code wrote/);
    assert.match(d, /1234 ms wall time/);
    assert.match(d, /numpy, pandas and matplotlib/);
    assert.doesNotMatch(d, /QuickJS/);
    assert.deepEqual(
      (kit.anthropic()[0]!.input_schema as { properties: { language: { enum: string[] } } }).properties.language.enum,
      ["python"],
    );
  });

  test("the description names the package library exactly when it is mounted", async () => {
    const describe = (box: Sandbox, pythonEngine: "pyodide" | "native") =>
      createToolkit({ sandbox: box, languages: ["python"], pythonEngine }).anthropic()[0]!.description;
    const saved = process.env.WASMCELL_CACHE_DIR;
    const empty = mkdtempSync(join(tmpdir(), "wasmcell-nolib-"));
    try {
      // The suite's cache has `wasmcell setup`'s library: both tiers say which packages they import.
      const mounted = sandbox.pythonPackages();
      assert.ok(mounted?.includes("requests"), `setup's library is installed: ${String(mounted)}`);
      for (const engine of ["pyodide", "native"] as const) {
        const d = describe(sandbox, engine);
        assert.match(d, /plus requests, .*bs4, .*yaml/, engine);
        assert.doesNotMatch(d, /standard library only/, engine);
      }
      // packages off, or no library in the cache: the standard library only, no package named.
      process.env.WASMCELL_CACHE_DIR = empty;
      for (const options of [{ python: { packages: false } }, {}]) {
        if ("python" in options) process.env.WASMCELL_CACHE_DIR = saved;
        else process.env.WASMCELL_CACHE_DIR = empty;
        await using bare = await createSandbox({ ...options });
        assert.equal(bare.pythonPackages(), undefined);
        const d = describe(bare, "pyodide");
        assert.match(d, /Pyodide\) with the standard library only/);
        assert.doesNotMatch(d, /requests/);
      }
    } finally {
      if (saved === undefined) delete process.env.WASMCELL_CACHE_DIR;
      else process.env.WASMCELL_CACHE_DIR = saved;
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test("handleToolCall takes OpenAI's JSON-string arguments and returns the model text", async () => {
    const kit = createToolkit({ sandbox });
    const text = await kit.handleToolCall(
      "run_code",
      JSON.stringify({ language: "javascript", code: "console.log('x'); 1 + 1" }),
    );
    assert.match(text, /^ok \(javascript, \d+ ms\)\nvalue: 2\nstdout:\nx$/);
  });

  test("input files are visible to the code", async () => {
    const kit = createToolkit({ sandbox });
    const out = await kit.callTool("run_code", {
      language: "python",
      code: "open('in.txt').read().upper()",
      files: { "in.txt": "hello" },
    });
    assert.equal(out.isError, false, out.text);
    assert.match(out.text, /value: "HELLO"/);
  });

  test("bad arguments: readable, isError, nothing run", async () => {
    const kit = createToolkit({ sandbox, limits: { maxCodeBytes: 64 } });
    const cases: [unknown, RegExp][] = [
      [{ language: "ruby", code: "1" }, /language must be one of/],
      [{ language: "javascript", code: 42 }, /code must be a string/],
      [{ language: "javascript" }, /code must be a string/],
      [{ language: "javascript", code: "x".repeat(65) }, /code is longer than the 64-byte limit/],
      [{ language: "javascript", code: "é".repeat(40) }, /code: is 80 bytes, over the 64-byte limit/],
      [{ language: "javascript", code: "1", shell: true }, /unknown argument "shell"/],
      [{ language: "python", code: "1", files: { "../etc/passwd": "x" } }, /must not contain '\.\.'/],
      ["{not json", /not valid JSON/],
    ];
    for (const [args, expected] of cases) {
      const out = await kit.callTool("run_code", args);
      assert.equal(out.isError, true, JSON.stringify(args));
      assert.match(out.text, expected, JSON.stringify(args));
    }
    assert.match(await kit.handleToolCall("rm_rf", {}), /unknown tool "rm_rf"; available: run_code/);
  });

  test("a session with the native tier is accepted (its sessions are live processes)", () => {
    assert.doesNotThrow(() => createToolkit({ sandbox, session: true, pythonEngine: "native" }));
    assert.doesNotThrow(() =>
      createToolkit({ sandbox, session: true, pythonEngine: "native", languages: ["javascript"] }),
    );
  });

  test("code mode over plain host functions", async () => {
    const kit = createToolkit({
      sandbox,
      codeMode: {
        tools: {
          add: {
            description: "a + b",
            inputSchema: {
              type: "object",
              properties: { a: { type: "number" }, b: { type: "number" } },
              required: ["a", "b"],
            },
            call: (input) =>
              Promise.resolve((input as { a: number; b: number }).a + (input as { a: number; b: number }).b),
          },
        },
      },
    });
    assert.match(
      kit.anthropic()[1]!.description,
      /tools\.add\(input: \{ a: number; b: number \}\): Promise<unknown> — a \+ b/,
    );
    const out = await kit.callTool("code_mode", { code: "await tools.add({ a: 2, b: 3 })" });
    assert.match(out.text, /value: 5/);
    assert.match(out.text, /tool calls: add/);
  });
});
