// Code mode: one tool whose JavaScript calls the application's other tools as `await tools.name(input)`,
// so a model chains many tool calls in one program instead of one model round-trip per call.
//
// The bridge is the JavaScript engine's host-function mechanism (RunRequest.hostFunctions): the guest
// gets one host function, `__wasmcell_tool(name, input)`, and a frozen `tools` object of thin wrappers
// around it. What crosses is JSON data both ways (the engine decodes guest arguments; we JSON-round-trip
// tool outputs), so no host object ever reaches the guest. Every call is counted (`maxToolCalls`), runs
// inside the run's deadline (the engine's signal aborts the tool when the run ends), and a tool that
// throws becomes an exception the guest can catch or let fail the run.
//
// Framework-neutral on purpose: the AI SDK adapter maps its tools to `BridgedTool`; another adapter can
// do the same.

import { z } from "zod";
import { InvalidOptionError } from "../../core/errors.ts";
import { requestWithin } from "../../options/index.ts";
import { DEFAULT_CODE_MODE } from "./defaults.ts";
import type { HostFunction, RunRequest } from "../../core/types.ts";
import type { ToolOutput } from "./format.ts";
import {
  codeField,
  formatOptions,
  runForModel,
  toJsonSchema,
  toolOffer,
  zodMessage,
  type CallHooks,
  type CodeTool,
  type CodeToolOptions,
} from "./run-code.ts";
import { formatBadInput } from "./format.ts";

export const CODE_MODE_TOOL_NAME = "code_mode";
const BRIDGE = "__wasmcell_tool";

/** A host tool the guest may call. `call` gets validated-by-the-tool input and returns JSON data. */
export interface BridgedTool {
  description?: string | undefined;
  /** JSON Schema of the input, rendered into the description as a TypeScript-like signature. */
  inputSchema?: Record<string, unknown> | undefined;
  /** JSON Schema of the output, where the tool declares one. */
  outputSchema?: Record<string, unknown> | undefined;
  /** `context` is the adapter's per-call data (`CallHooks.context`). */
  call(input: unknown, signal: AbortSignal, context: unknown): Promise<unknown>;
}

export interface CodeModeOptions extends CodeToolOptions {
  /**
   * Tool calls one program may make. Also the engine's `maxHostCalls` for the run.
   * @defaultValue 32 (`DEFAULT_CODE_MODE.maxToolCalls`)
   */
  maxToolCalls?: number;
  /**
   * Size cap on one tool's JSON output handed to the guest, in bytes.
   * @defaultValue 262144 (`DEFAULT_CODE_MODE.maxToolOutputBytes`)
   */
  maxToolOutputBytes?: number;
}

export interface CodeModeInput {
  code: string;
}

export function defineCodeModeTool(
  options: CodeModeOptions,
  tools: Record<string, BridgedTool>,
): CodeTool<CodeModeInput> {
  const maxToolCalls = options.maxToolCalls ?? DEFAULT_CODE_MODE.maxToolCalls;
  const maxToolOutputBytes = options.maxToolOutputBytes ?? DEFAULT_CODE_MODE.maxToolOutputBytes;
  if (!Number.isInteger(maxToolCalls) || maxToolCalls < 1)
    throw new InvalidOptionError("maxToolCalls", "must be a positive integer");
  if (!Number.isInteger(maxToolOutputBytes) || maxToolOutputBytes < 1)
    throw new InvalidOptionError("maxToolOutputBytes", "must be a positive integer");
  // The engine's own host-call bound is one above ours, so the guest sees our clearer message first and
  // the engine's count stays the backstop.
  const offer = toolOffer({ ...options, limits: { ...options.limits, maxHostCalls: maxToolCalls + 1 } });
  const limits = offer.defaults;
  const inputSchema = z.object({ code: codeField(limits) }).strict();
  const format = formatOptions(options, limits);
  const names = Object.keys(tools);
  const prelude = buildPrelude(names);
  return {
    name: options.name ?? CODE_MODE_TOOL_NAME,
    description: describeCodeMode(tools, limits.timeoutMs, maxToolCalls, options.notes),
    inputSchema,
    jsonSchema: toJsonSchema(inputSchema),
    async call(input, hooks: CallHooks = {}) {
      const parsed = inputSchema.safeParse(input);
      if (!parsed.success) return formatBadInput(zodMessage(parsed.error));
      const calls: string[] = [];
      const bridge: HostFunction = async (args, { signal }) => {
        const [name, toolInput] = args;
        if (typeof name !== "string" || !Object.hasOwn(tools, name)) {
          throw new Error(`tools.${String(name)} does not exist; available: ${names.join(", ") || "(none)"}`);
        }
        if (calls.length >= maxToolCalls)
          throw new Error(`tool call limit reached: at most ${maxToolCalls} tool calls per program`);
        calls.push(name);
        const both = hooks.signal ? AbortSignal.any([signal, hooks.signal]) : signal;
        let output: unknown;
        try {
          output = await tools[name]!.call(toolInput ?? {}, both, hooks.context);
        } catch (error) {
          throw new Error(`tools.${name} failed: ${error instanceof Error ? error.message : String(error)}`, {
            cause: error,
          });
        }
        let json: string;
        try {
          json = JSON.stringify(output ?? null);
        } catch (error) {
          throw new Error(
            `tools.${name} returned a value that is not JSON (${error instanceof Error ? error.message : String(error)})`,
            { cause: error },
          );
        }
        if (new TextEncoder().encode(json).byteLength > maxToolOutputBytes) {
          throw new Error(`tools.${name} returned more than ${maxToolOutputBytes} bytes of JSON; ask it for less`);
        }
        return JSON.parse(json) as unknown;
      };
      const run = async (code: string) => {
        // The bridge is the application's host function, added to what the model's request may use.
        const request: RunRequest = {
          ...requestWithin({ language: "typescript", code }, offer),
          hostFunctions: { [BRIDGE]: bridge },
        };
        if (hooks.signal) request.signal = hooks.signal;
        if (hooks.onOutput) request.onOutput = hooks.onOutput;
        return runForModel(() => options.sandbox.run(request), format);
      };
      // The prelude shares line 1 with the program, so line numbers in errors are the model's own.
      let prefix = prelude;
      let output = await run(prefix + parsed.data.code);
      if (
        output.isError &&
        calls.length === 0 &&
        /^error: syntax: .*return/im.test(output.text) &&
        /\breturn\b/.test(parsed.data.code)
      ) {
        // A top-level `return` (the habit of other code-mode tools): the parse failed before anything
        // ran, so running the program again inside an async function is safe and does what was meant.
        prefix = `${prelude}const __wasmcell_result = await (async () => {`;
        output = await run(`${prefix}${parsed.data.code}\n})();\n__wasmcell_result`);
      }
      return withCalls(output, calls, prefix.length);
    },
    close: () => Promise.resolve(),
  };
}

function buildPrelude(names: string[]): string {
  const entries = names.map(
    (n) => `${JSON.stringify(n)}: (input) => ${BRIDGE}(${JSON.stringify(n)}, input === undefined ? {} : input)`,
  );
  return `const tools = Object.freeze({ ${entries.join(", ")} }); `;
}

/** Adds which tools ran to the model text and takes the prelude's width out of line-1 columns. */
function withCalls(output: ToolOutput, calls: string[], preludeWidth: number): ToolOutput {
  let text = output.text.replace(
    /\(line 1, column (\d+)\)/,
    (_m, c: string) => `(line 1, column ${Math.max(1, Number(c) - preludeWidth)})`,
  );
  if (calls.length > 0) {
    const counts = new Map<string, number>();
    for (const c of calls) counts.set(c, (counts.get(c) ?? 0) + 1);
    text += `\ntool calls: ${[...counts].map(([n, k]) => (k > 1 ? `${n} ×${k}` : n)).join(", ")}`;
  }
  return { ...output, text };
}

function describeCodeMode(
  tools: Record<string, BridgedTool>,
  timeoutMs: number,
  maxToolCalls: number,
  notes: string | undefined,
): string {
  const signatures = Object.entries(tools).map(([name, t]) => {
    const input = t.inputSchema ? schemaToType(t.inputSchema) : "unknown";
    const output = t.outputSchema ? schemaToType(t.outputSchema) : "unknown";
    const key = /^[A-Za-z_$][\w$]*$/.test(name) ? `tools.${name}` : `tools[${JSON.stringify(name)}]`;
    return `- ${key}(input: ${input}): Promise<${output}>${t.description ? ` — ${t.description.replace(/\s+/g, " ").trim()}` : ""}`;
  });
  return [
    "Run a JavaScript or TypeScript program that calls the tools below as async functions, " +
      "to chain, combine and filter many tool calls in one step.",
    "Call a tool with `await tools.name(input)`; independent calls can run together with Promise.all. " +
      "The value of the program's last expression (or a top-level `return`) is returned to you, with console output.",
    "Tool inputs and outputs are JSON. A tool that fails throws an Error you can catch. " +
      `At most ${maxToolCalls} tool calls and ${timeoutMs} ms per program. ` +
      "No network, no Node.js APIs, no imports: only the tools.",
    "Available tools:",
    ...(signatures.length > 0 ? signatures : ["(none)"]),
    ...(notes ? [notes] : []),
  ].join("\n");
}

/** A compact TypeScript-like rendering of a JSON Schema, for tool signatures in a description. */
export function schemaToType(schema: unknown, depth = 0): string {
  if (typeof schema !== "object" || schema === null || depth > 6) return "unknown";
  const s = schema as Record<string, unknown>;
  if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ");
  if ("const" in s) return JSON.stringify(s.const);
  for (const key of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(s[key])) return (s[key] as unknown[]).map((x) => schemaToType(x, depth + 1)).join(" | ");
  }
  const type = s.type;
  if (Array.isArray(type))
    return (type as unknown[]).map((t) => schemaToType({ ...s, type: t }, depth + 1)).join(" | ");
  switch (type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array":
      return `${wrap(schemaToType(s.items, depth + 1))}[]`;
    case "object": {
      const props = (s.properties ?? {}) as Record<string, unknown>;
      const required = new Set<unknown>(Array.isArray(s.required) ? (s.required as unknown[]) : []);
      const fields = Object.entries(props).map(([k, v]) => {
        const key = /^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k);
        const doc =
          typeof (v as Record<string, unknown>)?.description === "string"
            ? ` /* ${String((v as Record<string, unknown>).description)} */`
            : "";
        return `${key}${required.has(k) ? "" : "?"}: ${schemaToType(v, depth + 1)}${doc}`;
      });
      if (fields.length === 0)
        return s.additionalProperties ? `Record<string, ${schemaToType(s.additionalProperties, depth + 1)}>` : "{}";
      return `{ ${fields.join("; ")} }`;
    }
    default:
      return "unknown";
  }
}

function wrap(type: string): string {
  return type.includes("|") ? `(${type})` : type;
}
