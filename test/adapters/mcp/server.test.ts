// End-to-end: `wasmcell mcp` as a child process, driven by the official MCP client over stdio and over
// Streamable HTTP on loopback. The same checks run against both transports. mcpServerFactory, in process.
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";
import { LoggingMessageNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer, mcpServerFactory, type CallGate } from "../../../src/adapters/mcp/index.ts";
import { createToolkit } from "../../../src/adapters/tools/index.ts";
import { createSandbox, type Sandbox } from "../../../src/index.ts";
import { PNG_PYTHON } from "../fixtures.ts";

const MAIN = fileURLToPath(new URL("../../../src/cli/main.ts", import.meta.url));
// Short limits so hostile-code checks stay quick; the operator sets them with flags, never the model.
const SERVER_FLAGS = ["--timeout-ms", "1500", "--memory-mb", "64"];

type Content = CallToolResult["content"][number];
const textOf = (r: CallToolResult) =>
  r.content
    .filter((c): c is Extract<Content, { type: "text" }> => c.type === "text")
    .map((c) => c.text)
    .join("\n");

function callTool(
  client: Client,
  args: Record<string, unknown>,
  options: Parameters<Client["callTool"]>[2] = {},
): Promise<CallToolResult> {
  return client.callTool({ name: "run_code", arguments: args }, undefined, options) as Promise<CallToolResult>;
}

function exercise(connect: () => Promise<{ client: Client; close: () => Promise<void> }>): void {
  let client: Client;
  let close: () => Promise<void>;
  const logs: string[] = [];
  before(async () => {
    ({ client, close } = await connect());
    client.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void logs.push(`${n.params.logger ?? ""}:${String(n.params.data)}`),
    );
  });
  after(async () => {
    await close();
  });

  test("lists run_code with the shared schema and description", async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      ["run_code"],
    );
    const tool = tools[0]!;
    const sandbox = await createSandbox({ limits: { timeoutMs: 1500, memoryMb: 64 } });
    const [shared] = createToolkit({ sandbox }).anthropic();
    await sandbox.close();
    assert.equal(tool.description, shared!.description);
    assert.deepEqual(tool.inputSchema, shared!.input_schema);
  });

  test("runs JavaScript and Python", async () => {
    const js = await callTool(client, { language: "javascript", code: "[1, 2, 3].reduce((a, b) => a + b)" });
    assert.equal(js.isError, undefined);
    assert.match(textOf(js), /^ok \(javascript.*\nvalue: 6$/);
    const py = await callTool(client, { language: "python", code: "print('py'); 2 ** 8" });
    assert.match(textOf(py), /value: 256\nstdout:\npy/);
  });

  test("a Python-written PNG comes back as image content", async () => {
    const r = await callTool(client, { language: "python", code: PNG_PYTHON });
    assert.equal(r.isError, undefined, textOf(r));
    const image = r.content.find((c) => c.type === "image");
    assert.ok(image && image.type === "image");
    assert.equal(image.mimeType, "image/png");
    assert.deepEqual([...Buffer.from(image.data, "base64").subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    assert.match(textOf(r), /red\.png \(image\/png/);
  });

  test("a written CSV comes back as an embedded text resource", async () => {
    const r = await callTool(client, { language: "python", code: "open('t.csv', 'w').write('a,b\\n1,2\\n')" });
    const resource = r.content.find((c) => c.type === "resource");
    assert.ok(resource && resource.type === "resource", textOf(r));
    assert.deepEqual(resource.resource, { uri: "wasmcell://output/t.csv", mimeType: "text/csv", text: "a,b\n1,2\n" });
  });

  test("stdout streams as progress and log notifications before the result", async () => {
    const progress: string[] = [];
    logs.length = 0;
    const code =
      "for (let i = 0; i < 3; i++) { console.log('tick ' + i); await new Promise((r) => setTimeout(r, 120)); }\n'done'";
    const r = await callTool(
      client,
      { language: "javascript", code },
      { onprogress: (p) => void progress.push(p.message ?? "") },
    );
    assert.match(textOf(r), /value: "done"/);
    assert.match(progress.join(""), /tick 0\ntick 1\ntick 2\n/);
    assert.match(logs.filter((l) => l.startsWith("stdout:")).join(""), /tick 0\n.*tick 2\n/s);
    // Python's output comes from the sidecar while it runs, not after.
    progress.length = 0;
    const py = "import time\nfor i in range(3):\n    print('py tick', i, flush=True)\n    time.sleep(0.15)\n'done'";
    const r2 = await callTool(
      client,
      { language: "python", code: py },
      { onprogress: (p) => void progress.push(p.message ?? "") },
    );
    assert.match(textOf(r2), /value: "done"/);
    assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
    assert.equal(progress.join(""), "py tick 0\npy tick 1\npy tick 2\n");
  });

  test("bad input gets a clean, readable isError result and nothing runs", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ language: "javascript", code: 42 }, "code must be a string"],
      [{ language: "cobol", code: "DISPLAY 1" }, 'language must be one of "javascript", "typescript", "python"'],
      [{ language: "javascript", code: "x".repeat(1024 * 1024 + 1) }, "code is longer than the 1048576-byte limit"],
      [{ language: "python", code: "1", timeoutMs: 999_999 }, 'unknown argument "timeoutMs"'],
    ];
    for (const [args, expected] of cases) {
      const r = await callTool(client, args);
      assert.equal(r.isError, true);
      assert.equal(textOf(r), `invalid input: ${expected}\nNothing was run. Fix the arguments and call again.`);
    }
    const unknown = (await client.callTool({ name: "exec_shell", arguments: {} })) as CallToolResult;
    assert.equal(unknown.isError, true);
    assert.match(textOf(unknown), /unknown tool "exec_shell"; available: run_code/);
  });

  test("survives hostile code and keeps serving", async () => {
    const hostile: [string, string, RegExp][] = [
      ["javascript", "while (true) {}", /^error: timeout/],
      [
        "javascript",
        "const a = []; while (true) a.push(new Array(1e5).fill('x'.repeat(64)));",
        /^error: (memory|timeout)/,
      ],
      ["javascript", "function f(n) { return f(n + 1) + 1; } f(0)", /^error: stack/],
      ["javascript", "globalThis.process?.exit?.(1); require('child_process')", /^error: runtime: ReferenceError/],
      ["python", "while True: pass", /^error: timeout/],
      ["python", "import os; os._exit(3)", /^error: /],
    ];
    for (const [language, code, expected] of hostile) {
      const r = await callTool(client, { language, code });
      assert.equal(r.isError, true, `${language}: ${code}`);
      assert.match(textOf(r), expected, `${language}: ${code}`);
    }
    const after = await callTool(client, { language: "python", code: "1 + 1" });
    assert.match(textOf(after), /value: 2/);
    const afterJs = await callTool(client, { language: "javascript", code: "'still here'" });
    assert.match(textOf(afterJs), /value: "still here"/);
  });
}

describe("wasmcell mcp over stdio", () => {
  exercise(async () => {
    const client = new Client({ name: "wasmcell-test", version: "1.0.0" });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, "mcp", ...SERVER_FLAGS],
      stderr: "pipe",
    });
    await client.connect(transport);
    return { client, close: () => client.close() };
  });
});

describe("wasmcell mcp over Streamable HTTP on loopback", () => {
  let child: ChildProcess;
  exercise(async () => {
    child = spawn(process.execPath, [MAIN, "mcp", "--http", "--port", "0", ...SERVER_FLAGS], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    const url = new URL(
      await new Promise<string>((resolve, reject) => {
        let err = "";
        child.stderr!.on("data", (d: Buffer) => {
          err += d.toString();
          const m = /listening on (http:\/\/\S+)/.exec(err);
          if (m) resolve(m[1]!);
        });
        child.once("exit", (code) => reject(new Error(`server exited ${code}: ${err}`)));
      }),
    );
    assert.equal(url.hostname, "127.0.0.1");
    const client = new Client({ name: "wasmcell-test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url));
    return {
      client,
      close: async () => {
        await client.close();
        child.kill("SIGTERM");
      },
    };
  });
});

describe("wasmcell mcp --session", () => {
  test("each client keeps its variables between calls, per language", async () => {
    const connect = async () => {
      const client = new Client({ name: "wasmcell-test", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [MAIN, "mcp", "--session", ...SERVER_FLAGS],
          stderr: "pipe",
        }),
      );
      return client;
    };
    const client = await connect();
    try {
      assert.match((await client.listTools()).tools[0]!.description!, /State persists between calls/);
      await callTool(client, { language: "python", code: "total = 40" });
      assert.match(textOf(await callTool(client, { language: "python", code: "total + 2" })), /value: 42/);
      await callTool(client, { language: "javascript", code: "var n = 7" });
      assert.match(textOf(await callTool(client, { language: "javascript", code: "n * 6" })), /value: 42/);
    } finally {
      await client.close();
    }
  });
});

describe("wasmcell mcp --session --engine native", () => {
  test("a client's Python session is a live native child: a DataFrame read once answers the next call", async () => {
    const client = new Client({ name: "wasmcell-test", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [MAIN, "mcp", "--session", "--engine", "native", "--timeout-ms", "20000"],
        stderr: "pipe",
      }),
    );
    try {
      const first = await callTool(client, {
        language: "python",
        code: "import pandas as pd, os\ndf = pd.DataFrame({'a': range(1, 41)})\npid = os.getpid()\nlen(df)",
      });
      assert.match(textOf(first), /value: 40/, textOf(first));
      const next = await callTool(client, { language: "python", code: "int(df.a.sum()), os.getpid() == pid" });
      assert.match(textOf(next), /value: \[820, true\]/, textOf(next));
      // The same interpreter: pandas' own state, not a re-read, and no Pyodide (it has no pandas here).
      const engine = await callTool(client, { language: "python", code: "import sys\nsys.executable" });
      assert.match(textOf(engine), /python3/, textOf(engine));
    } finally {
      await client.close();
    }
  });
});

describe("mcpServerFactory", () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await createSandbox({ limits: { timeoutMs: 1500 } });
  });
  after(() => sandbox.close());

  async function connectTo(server: Server): Promise<Client> {
    // A 2025-11-25 client (SDK v1) and the server (SDK v2) over the v1 in-memory pair: the transport
    // interface is the same in both.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: "wasmcell-test", version: "1.0.0" });
    await client.connect(clientSide);
    return client;
  }

  /** A gate that runs calls at once and records the languages it was asked about. */
  function recordingGate(): CallGate & { seen: string[] } {
    const seen: string[] = [];
    return { seen, run: (_lane, call) => call(), finished: (language) => void seen.push(language) };
  }

  test("servers share the definition and the SDK's validator, each with its own gate", async (t) => {
    const described = t.mock.method(sandbox, "describeJavaScriptRuntime");
    const make = mcpServerFactory({ sandbox });
    const [gateA, gateB] = [recordingGate(), recordingGate()];
    const [a, b] = [make(gateA), make(gateB)];
    // Building the description reads the runtime's table: once for the factory, not once per server.
    assert.equal(described.mock.callCount(), 1);
    // The SDK keeps its validator in a private field; a fresh Ajv per server is what the factory avoids.
    const validator = (s: Server) => Reflect.get(s, "_jsonSchemaValidator") as unknown;
    assert.ok(validator(a) instanceof AjvJsonSchemaValidator);
    assert.equal(validator(a), validator(b));
    const [clientA, clientB] = [await connectTo(a), await connectTo(b)];
    const single = await connectTo(createMcpServer({ sandbox }));
    try {
      const { tools } = await clientA.listTools();
      assert.deepEqual(tools, (await clientB.listTools()).tools);
      assert.deepEqual(tools, (await single.listTools()).tools);
      await callTool(clientA, { language: "javascript", code: "1" });
      await callTool(clientA, { language: "cobol", code: "1" });
      await callTool(clientB, { language: "typescript", code: "1" });
      assert.deepEqual(gateA.seen, ["javascript", "invalid"]);
      assert.deepEqual(gateB.seen, ["typescript"]);
    } finally {
      await Promise.all([clientA.close(), clientB.close(), single.close()]);
    }
  });

  test("with session: true each server has its own interpreters", async () => {
    const make = mcpServerFactory({ sandbox, session: true, languages: ["javascript"] });
    const [a, b] = [await connectTo(make()), await connectTo(make())];
    try {
      await callTool(a, { language: "javascript", code: "var n = 7" });
      assert.match(textOf(await callTool(a, { language: "javascript", code: "n * 6" })), /value: 42/);
      assert.match(textOf(await callTool(b, { language: "javascript", code: "typeof n" })), /value: "undefined"/);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
