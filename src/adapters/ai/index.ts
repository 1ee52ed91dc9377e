// `wasmcell/ai`: AI SDK 7 tools. A thin room: names, descriptions, schemas and model-facing output all
// come from ../tools, so an AI SDK agent, an MCP client and a raw function-calling loop see the same tool.
//
// - `runCodeTool()` — the `run_code` tool (JavaScript, TypeScript, Python).
// - `codeModeTool()` — JavaScript that calls the application's other AI SDK tools as
//   `await tools.name(input)`. Works two ways: pass `tools` directly, or route tools to it with the
//   AI SDK's `experimental_toolCallers` (it is a local tool caller; the SDK binds the routed tools).
// - `createSandboxSession()` — the AI SDK's `Experimental_SandboxSession` (`experimental_sandbox`): a
//   workspace of files and a command line that runs python/node programs over it (./sandbox-session.ts).
//
// Settings (sandbox, engine, limits, output caps) are arguments of these factories: the model only ever
// chooses the language, the code and input files.

import {
  asSchema,
  experimental_toolCaller,
  jsonSchema,
  tool,
  type Experimental_ToolCallerTool,
  type JSONSchema7,
  type Tool,
  type ToolExecutionOptions,
  type ToolSet,
} from "ai";
import { defineCodeModeTool, type BridgedTool, type CodeModeOptions } from "../tools/code-mode.ts";
import type { ToolOutput } from "../tools/format.ts";
import { defineRunCodeTool, type CodeTool, type RunCodeInput, type RunCodeToolOptions } from "../tools/run-code.ts";

export type { ToolOutput, ToolOutputFile } from "../tools/format.ts";
export type { CodeModeOptions } from "../tools/code-mode.ts";
export type { RunCodeInput, RunCodeToolOptions } from "../tools/run-code.ts";
export { createSandboxSession, type SandboxSessionOptions } from "./sandbox-session.ts";

/**
 * The `run_code` tool. Add it to `tools` under "run_code" (or any name). With `session: true` the tool
 * holds interpreters: make one per conversation (state is shared by everything that calls this tool
 * object) and dispose of it when the conversation ends (`await using`, or `[Symbol.asyncDispose]()`);
 * closing the sandbox closes them too.
 */
export function runCodeTool(options: RunCodeToolOptions): Tool<RunCodeInput, ToolOutput> & AsyncDisposable {
  const defined = defineRunCodeTool(options);
  return Object.assign(asAiTool(defined), { [Symbol.asyncDispose]: () => defined.close() });
}

/**
 * The code-mode tool. `tools` are callable from the program; tools routed to it through
 * `experimental_toolCallers: { name: ["<this tool's key>"] }` are added when the AI SDK binds it.
 * Tools that need approval or have no `execute` are not callable from code (the SDK cannot pause
 * a nested call for approval).
 */
export function codeModeTool(
  options: CodeModeOptions & { tools?: ToolSet },
): Experimental_ToolCallerTool<Tool<{ code: string }, ToolOutput>> {
  const { tools: given = {}, ...settings } = options;
  const make = (tools: ToolSet) => asAiTool(defineCodeModeTool(settings, bridgeTools(tools)));
  return experimental_toolCaller(make(given), { type: "local", bind: (routed) => make({ ...given, ...routed }) });
}

/** What `toModelOutput` returns (the AI SDK's ToolResultOutput, which `ai` does not re-export). */
export type ModelOutput = Awaited<ReturnType<NonNullable<Tool["toModelOutput"]>>>;

type ForwardedContext = Pick<ToolExecutionOptions<unknown>, "messages" | "context">;

/**
 * The model is sent the exact JSON Schema, but the SDK-level check lets every input through to
 * `execute`, which validates with the same zod schema as MCP and raw calls. So bad arguments read the
 * same everywhere ("invalid input: language must be one of …; Nothing was run"), and the SDK's own
 * message — which echoes the whole input back, a megabyte of code included — never reaches the model.
 */
function asAiTool<INPUT>(defined: CodeTool<INPUT>): Tool<INPUT, ToolOutput> {
  return tool({
    description: defined.description,
    inputSchema: jsonSchema<INPUT>(defined.jsonSchema as JSONSchema7, {
      validate: (value) => ({ success: true, value: value as INPUT }),
    }),
    execute: (input: INPUT, options: ToolExecutionOptions<unknown>) => {
      const context: ForwardedContext = { messages: options.messages, context: options.context };
      return defined.call(input, options.abortSignal ? { signal: options.abortSignal, context } : { context });
    },
    toModelOutput: ({ output }: { output: ToolOutput }) => toModelOutput(output),
  });
}

/**
 * Text for the model, plus images as file content (the AI SDK forwards them to vision-capable models):
 * the images among the files the run wrote, then the images it displayed (a figure, a PIL image).
 */
export function toModelOutput(output: ToolOutput): ModelOutput {
  if (output.isError) return { type: "error-text", value: output.text };
  const images = output.files
    .filter((f) => f.base64 !== undefined && f.mimeType.startsWith("image/"))
    .map((f) => ({ mediaType: f.mimeType, filename: f.path, data: f.base64! }));
  output.results.forEach((item, i) => {
    for (const [type, value] of Object.entries(item.data))
      if (DISPLAY_IMAGE_TYPES.has(type) && typeof value === "string")
        images.push({ mediaType: type, filename: `display-${i + 1}.${type.slice("image/".length)}`, data: value });
  });
  if (images.length === 0) return { type: "text", value: output.text };
  return {
    type: "content",
    value: [
      { type: "text", text: output.text },
      ...images.map((f) => ({
        type: "file" as const,
        mediaType: f.mediaType,
        filename: f.filename,
        data: { type: "data" as const, data: f.data },
      })),
    ],
  };
}

const DISPLAY_IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/**
 * AI SDK tools → bridged tools: the input is validated with the tool's own schema before `execute`
 * runs, streaming tools (async iterables) yield their last value, and the outer call's abort signal,
 * messages and context are forwarded.
 */
function bridgeTools(tools: ToolSet): Record<string, BridgedTool> {
  const bridged: Record<string, BridgedTool> = {};
  let callId = 0;
  for (const [name, t] of Object.entries(tools)) {
    const execute = t.execute as ((input: unknown, options: ToolExecutionOptions<unknown>) => unknown) | undefined;
    if (!execute || t.needsApproval) continue;
    const schema = t.inputSchema ? asSchema(t.inputSchema) : undefined;
    const outputSchema = t.outputSchema ? asSchema(t.outputSchema) : undefined;
    bridged[name] = {
      description: typeof t.description === "string" ? t.description : undefined,
      inputSchema: syncJsonSchema(schema),
      outputSchema: syncJsonSchema(outputSchema),
      async call(input, signal, forwarded) {
        let value = input;
        if (schema?.validate) {
          const checked = await schema.validate(input);
          if (!checked.success) throw new Error(`invalid input: ${checked.error.message}`);
          value = checked.value;
        }
        const { messages = [], context = {} } = (forwarded ?? {}) as Partial<ForwardedContext>;
        const result = execute(value, {
          toolCallId: `wasmcell-code-mode-${++callId}`,
          abortSignal: signal,
          messages,
          context,
        });
        if (isAsyncIterable(result)) {
          let last: unknown;
          for await (const part of result) last = part;
          return last;
        }
        return await result;
      },
    };
  }
  return bridged;
}

function syncJsonSchema(schema: { jsonSchema: unknown } | undefined): Record<string, unknown> | undefined {
  const json = schema?.jsonSchema;
  // Lazy schemas may hand out a promise; the description then says `unknown` rather than wait.
  return json && typeof json === "object" && !("then" in json) ? (json as Record<string, unknown>) : undefined;
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
